# %systemd_postun_with_restart brr-exporter.service, expanded: on upgrade,
# restart the unit if it runs, so that the new binary serves.
if [ "$1" -ge 1 ] && [ -x /usr/lib/systemd/systemd-update-helper ]; then
    /usr/lib/systemd/systemd-update-helper mark-restart-system-units brr-exporter.service || :
fi
