#!/bin/sh
# dracut pre-trigger hook (an initramfs without systemd; sourced by dracut,
# so no exit here): initramfs-tools' init-top script, installed beside it.
/usr/lib/rngfeed/initramfs-start
