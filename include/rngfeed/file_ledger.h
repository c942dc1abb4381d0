/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The file ledger: which content of credited regular files has been read,
 * kept on disk so that the same bytes are credited once per machine,
 * whatever path, mount or device shows them (a symlink, a hard link, a
 * bind mount, an overlayfs lower and merged path, a copy), across
 * reloads, restarts and instances that share the directory (issue 33).
 *
 * A file is read in blocks of FILE_LEDGER_BLOCK bytes at offsets that are
 * multiples of it (the health tests' block: no read beyond what the next
 * block needs).  Each block is known by its key, the first 16 bytes of its
 * SHA-256: a block whose key the ledger holds was read before, anywhere,
 * and is skipped; one it does not hold is claimed (its key added) before
 * it is read.  So an edit of one byte makes one block new, a file cut
 * short and given a new tail makes the block at the cut and the tail new,
 * and two instances reading one file take turns at its blocks.  Bytes
 * inserted or removed shift every block after them: those are new
 * content to the ledger.
 *
 * On disk, DIR/file-blocks: a 4 KiB header (magic, the number of buckets,
 * the machine it belongs to and since when, a checksum) and 2^shift
 * buckets of 4 KiB, each with up to FILE_LEDGER_BUCKET_KEYS keys and a
 * checksum; a key lives in the bucket its first bytes name.  When a bucket
 * is full the table doubles (written anew beside it, synced, renamed over
 * it), up to FILE_LEDGER_MAX_SHIFT (256 MiB, 16.7 million blocks: 41 GB of
 * content); past that, new content is not claimed (FILE_LEDGER_FULL).
 * Every change is made under an flock() on DIR/file-blocks.lock and made
 * durable (fdatasync) before the claim returns; claims are made a window
 * of blocks at a time.
 *
 * Robust to damage, never at the price of credit: a header that is not
 * this version's (another program's file, a truncated one) makes every
 * call fail (-EBADMSG), so nothing is credited until it is moved away; a
 * bucket whose checksum does not match is taken as holding every key (its
 * keys are unknown: they may all have been read), and stays so.
 *
 * A ledger of the earlier kind (DIR/file-ledger, keyed by device and
 * inode, how far each file was read) is still read, never written:
 * file_ledger_legacy_offset().
 *
 * No logging, no globals; every function returns 0 / 1 or -errno.
 */
#ifndef RNGFEED_FILE_LEDGER_H
#define RNGFEED_FILE_LEDGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rngfeed/monitor.h"

#define FILE_LEDGER_NAME "file-blocks"
#define FILE_LEDGER_LEGACY_NAME "file-ledger"
#define FILE_LEDGER_BLOCK MONITOR_BLOCK_BYTES
#define FILE_LEDGER_KEY_LEN 16
#define FILE_LEDGER_BUCKET_BYTES 4096u
#define FILE_LEDGER_BUCKET_KEYS 255u
/* 16 buckets at first (68 KiB), doubled as needed up to 65,536. */
#define FILE_LEDGER_INITIAL_SHIFT 4u
#define FILE_LEDGER_MAX_SHIFT 16u
/* Outside systemd (no $STATE_DIRECTORY): where the ledger lives. */
#define FILE_LEDGER_DEFAULT_DIR "/var/lib/rngfeed"
#define FILE_LEDGER_MACHINE_ID "/etc/machine-id"

/* What a claim found for one key. */
enum file_ledger_verdict {
	FILE_LEDGER_SEEN,     /* read before (or its bucket is damaged) */
	FILE_LEDGER_CLAIMED,  /* new: added now, the caller's to read */
	FILE_LEDGER_FULL,     /* new, but the ledger is at its size limit */
};

struct file_ledger;

/*
 * Make @dir's ledger this machine's (the id read from @machine_id_path,
 * normally FILE_LEDGER_MACHINE_ID); called once at start-up.  A missing
 * ledger is started (and @dir created, 0700), with the machine and "since"
 * of a ledger of the earlier kind when there is one.  A ledger written on
 * another machine (the state directory came with a copied image) keeps
 * every key (what was read there stays spent here) and is stamped with
 * this machine and the time now as its "since": a regular file whose
 * status last changed before that was in the image, and is not credited
 * here (file_ledger_since()).  Returns 0 this machine's (or new), 1 adopted
 * from another machine (@other gets its id, 33 bytes), -errno; a machine
 * id that cannot be read is its -errno, but the ledger is made all the same
 * (it works, without that check).
 */
int file_ledger_adopt(const char *dir, const char *machine_id_path, char *other);

/* A handle on @dir's ledger for one reader (made when missing, as
 * file_ledger_adopt() would, without a machine); tables grow up to
 * @max_shift (FILE_LEDGER_MAX_SHIFT; tests use less).  0 or -errno
 * (-EBADMSG: a file that is not a ledger of this version). */
int file_ledger_open(const char *dir, unsigned max_shift, struct file_ledger **out);
void file_ledger_close(struct file_ledger *l);
/* The adoption time (0: the ledger began on this machine). */
int64_t file_ledger_since(const struct file_ledger *l);

/* The key of a block: the first FILE_LEDGER_KEY_LEN bytes of its
 * SHA-256.  0 or -errno. */
int file_ledger_key(const void *block, size_t len, uint8_t key[FILE_LEDGER_KEY_LEN]);

/*
 * Claim @n keys (@n <= 1024) at once, under the lock: verdicts[i] says
 * what key i was (enum file_ledger_verdict); keys added are durable before
 * it returns.  A key twice among @keys is claimed once.  0 or -errno
 * (-EAGAIN: another process held the lock for half a second).
 */
int file_ledger_claim(struct file_ledger *l, const uint8_t (*keys)[FILE_LEDGER_KEY_LEN],
		      size_t n, uint8_t *verdicts);
/* Give back keys this caller claimed and did not read (a reader that
 * stops): removed, so that the next reader reads those blocks.  0 or
 * -errno (then they stay claimed: lost, never read twice). */
int file_ledger_release(struct file_ledger *l, const uint8_t (*keys)[FILE_LEDGER_KEY_LEN],
			size_t n);

/* How far a ledger of the earlier kind in @dir says the file (@dev, @ino)
 * (or @ino on another device: device numbers change between boots) was
 * read: 1 with *@offset, 0 when it has no such entry (or there is no such
 * ledger), -errno (-EBADMSG: not one). */
int file_ledger_legacy_offset(const char *dir, uint64_t dev, uint64_t ino, uint64_t *offset);

/* Give @dir, its ledger and its lock to @uid:@gid (the user rngfeed runs
 * as after dropping privileges: its readers write the ledger).  0 or
 * -errno. */
int file_ledger_chown(const char *dir, uid_t uid, gid_t gid);

/* The ledger directory for this run: $STATE_DIRECTORY's first entry when
 * set (systemd's StateDirectory=), else FILE_LEDGER_DEFAULT_DIR. */
const char *file_ledger_default_dir(char *buf, size_t len);

#endif
