# %systemd_post brr-exporter.service, expanded (cargo-generate-rpm does not
# expand macros): on first install, apply the presets, which leave a unit
# that no preset names disabled.
if [ "$1" -eq 1 ] && [ -x /usr/lib/systemd/systemd-update-helper ]; then
    /usr/lib/systemd/systemd-update-helper install-system-units brr-exporter.service || :
fi
