#!/bin/sh
# dracut cleanup hook, run before switch_root (sourced: no exit here):
# initramfs-tools' init-bottom script, installed beside it.
/usr/lib/rngfeed/initramfs-stop
