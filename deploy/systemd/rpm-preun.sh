# %systemd_preun brr-exporter.service, expanded: on removal (not on
# upgrade), stop and disable the unit.
if [ "$1" -eq 0 ] && [ -x /usr/lib/systemd/systemd-update-helper ]; then
    /usr/lib/systemd/systemd-update-helper remove-system-units brr-exporter.service || :
fi
