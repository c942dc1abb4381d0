/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The file ledger: how far each regular file has been read, kept on disk
 * so that the same bytes are credited once per machine, across reloads,
 * restarts and whatever path names the file.
 *
 * A file is named by what it is, not by a path: (st_dev, st_ino).  Each
 * entry says the file was read up to @offset (those bytes are spent,
 * credited or not) and holds the SHA-256 of its first @hashed bytes
 * (hashed <= offset), so that a file whose content changed since (or an
 * inode number reused by another file) is seen as new input.
 *
 * One text file, DIR/file-ledger, replaced whole (write, fsync, rename)
 * under an flock() on DIR/file-ledger.lock, so that several readers and
 * several instances may share it.  Its first line names the machine it
 * belongs to (/etc/machine-id): see file_ledger_adopt().
 *
 * No logging, no globals; every function returns 0 / 1 or -errno.
 */
#ifndef RNGFEED_FILE_LEDGER_H
#define RNGFEED_FILE_LEDGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define FILE_LEDGER_NAME "file-ledger"
#define FILE_LEDGER_HASH_LEN 32      /* SHA-256 */
/* The oldest entries (by last use) are dropped beyond this many. */
#define FILE_LEDGER_MAX_ENTRIES 4096u
/* Outside systemd (no $STATE_DIRECTORY): where the ledger lives. */
#define FILE_LEDGER_DEFAULT_DIR "/var/lib/rngfeed"
#define FILE_LEDGER_MACHINE_ID "/etc/machine-id"

struct file_ledger_mark {
	uint64_t dev, ino;
	uint64_t offset;  /* bytes spent: never read again */
	uint64_t hashed;  /* the hash covers bytes [0, hashed) */
	uint8_t hash[FILE_LEDGER_HASH_LEN];
};

/*
 * Make @dir's ledger this machine's (the id read from @machine_id_path,
 * normally FILE_LEDGER_MACHINE_ID); called once at start-up.  A missing
 * ledger is started (and @dir created, 0700).  A ledger written on
 * another machine (the state directory came with a copied image) keeps
 * every entry (what was read there stays spent here) and is stamped with
 * this machine and the time now as its "since": a regular file it does
 * not list whose status last changed before that was in the image, and
 * is not credited here (see file_ledger_lookup()).  Returns 0 this
 * machine's (or new), 1 adopted from another machine (@other gets its id,
 * 33 bytes), -errno; a machine id that cannot be read is its -errno, but
 * the ledger is made all the same (it works, without that check).
 */
int file_ledger_adopt(const char *dir, const char *machine_id_path,
		      char *other);

/*
 * The entry for (@dev, @ino) in @dir's ledger, or else one for @ino on
 * another device (device numbers can change between boots; the caller
 * checks the hashed prefix): 1 with *@out, 0 when there is none (or no
 * ledger yet), -errno (a ledger that cannot be read or
 * parsed: the caller must not credit the file then).  *@since (may be
 * NULL) gets the ledger's adoption time (0: it began on this machine).
 */
int file_ledger_lookup(const char *dir, uint64_t dev, uint64_t ino,
		       struct file_ledger_mark *out, int64_t *since);

/*
 * Record @m for its file, provided the ledger's entry for it still says
 * @expect_offset (or there is none and @expect_offset is 0): 1 written
 * (durably, before it returns), 0 not written because the entry moved on
 * (another reader or instance read further: *@now holds it), -errno.
 */
int file_ledger_record(const char *dir, const struct file_ledger_mark *m,
		       uint64_t expect_offset, struct file_ledger_mark *now);

/* Give @dir, its ledger and its lock to @uid:@gid (the user rngfeed runs
 * as after dropping privileges: its readers write the ledger).  0 or
 * -errno. */
int file_ledger_chown(const char *dir, uid_t uid, gid_t gid);

/* The ledger directory for this run: $STATE_DIRECTORY's first entry when
 * set (systemd's StateDirectory=), else FILE_LEDGER_DEFAULT_DIR. */
const char *file_ledger_default_dir(char *buf, size_t len);

#endif
