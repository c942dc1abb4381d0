/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Noticing a VM generation change: when a VM is restored from a snapshot
 * or cloned, the kernel's vmgenid driver reseeds the kernel's CRNG and
 * sends a uevent carrying NEW_VMGENID=1 (Linux 5.18 and later).  Every
 * copy of the VM then holds the same DRBG state and the same tested
 * blocks in memory; the daemon must discard both before crediting again.
 */
#ifndef RNGFEED_VMGENID_H
#define RNGFEED_VMGENID_H

#include <stdbool.h>
#include <stddef.h>

/* A non-blocking socket on the kernel's uevent multicast group, or
 * -errno (the daemon runs without the check then, and says so). */
int vmgenid_open(void);

/* Is this uevent payload ("ACTION@DEVPATH\0KEY=VALUE\0...") a VM
 * generation change? */
bool vmgenid_is_change(const char *msg, size_t len);

/* Read every pending uevent; 1 if one was a VM generation change sent by
 * the kernel, 0 if none, -errno on a socket error. */
int vmgenid_drain(int fd);

#endif
