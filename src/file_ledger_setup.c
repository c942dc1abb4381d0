// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The file ledger made ready for a daemon's run (see
 * include/rngfeed/file_ledger_setup.h): tied to this machine and given to
 * the user the readers run as.  The ledger itself is file_ledger.c.
 */
#include <stdbool.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "rngfeed/config.h"
#include "rngfeed/file_ledger.h"
#include "rngfeed/file_ledger_setup.h"
#include "rngfeed/log.h"
#include "rngfeed/privs.h"
#include "rngfeed/source.h"

/*
 * The file ledger is this machine's: a state directory that came with a
 * copied image keeps what it lists as read, and the files that came with
 * the image are not credited here (file_ledger_adopt()).  Only when a
 * credited file source is configured: other runs leave the directory be.
 */
void file_ledger_setup(const struct rngfeed_config *cfg)
{
	char other[40] = "";
	bool credited_file = false;
	int r;

	for (size_t i = 0; i < cfg->n_sources; i++)
		credited_file |= cfg->sources[i].enabled &&
				 strcmp(cfg->sources[i].driver->name, "file") == 0 &&
				 source_config_credit(&cfg->sources[i]) > 0;
	if (cfg->mode != MODE_DAEMON || !credited_file)
		return;
	r = file_ledger_adopt(cfg->state_dir, FILE_LEDGER_MACHINE_ID, other);
	if (cfg->user[0] || geteuid() == 0) {
		/* After the drop the readers write it as that user, without
		 * CAP_DAC_OVERRIDE even as root: theirs, whoever had it. */
		char why[200];
		uid_t uid = geteuid();
		gid_t gid = getegid();
		int c = cfg->user[0] ? privs_lookup_user(cfg->user, &uid, &gid,
							 why, sizeof(why))
				     : 0;

		if (c == 0)
			c = file_ledger_chown(cfg->state_dir, uid, gid);
		if (c < 0)
			log_warn("file ledger in %s: cannot give it to %s (%s): "
				 "a credited regular file will not be read",
				 cfg->state_dir,
				 cfg->user[0] ? cfg->user : "this user",
				 strerror(-c));
	}
	if (r == 1)
		log_notice("file ledger %s/%s was written on machine %s: what "
			   "it lists stays read; regular files from before now "
			   "that it does not list came with the image and are "
			   "not credited here",
			   cfg->state_dir, FILE_LEDGER_NAME, other);
	else if (r < 0)
		log_warn("file ledger in %s: cannot tie it to this machine "
			 "(%s: %s); a copied image's files cannot be told apart",
			 cfg->state_dir, FILE_LEDGER_MACHINE_ID, strerror(-r));
}
