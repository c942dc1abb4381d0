// SPDX-License-Identifier: GPL-2.0-or-later
/* Recognising the vmgenid uevent among all the others. */
#include <check.h>
#include <stdlib.h>

#include "rngfeed/vmgenid.h"
#include "test_doubles.h"

#define MSG(s) s, sizeof(s) - 1

START_TEST(change_is_recognised)
{
	ck_assert(vmgenid_is_change(MSG("change@/devices/platform/VMGENCTR:00\0"
					"ACTION=change\0NEW_VMGENID=1\0SEQNUM=7\0")));
	/* Last variable without its NUL: the length bounds it. */
	ck_assert(vmgenid_is_change(MSG("change@/x\0NEW_VMGENID=1")));
}
END_TEST

START_TEST(others_are_not)
{
	ck_assert(!vmgenid_is_change(MSG("add@/devices/virtual/net/lo\0"
					 "ACTION=add\0SEQNUM=1\0")));
	ck_assert(!vmgenid_is_change(MSG("change@/x\0NEW_VMGENID=10\0")));
	ck_assert(!vmgenid_is_change(MSG("change@/x\0NEW_VMGENID=0\0")));
	ck_assert(!vmgenid_is_change(MSG("change@/x\0XNEW_VMGENID=1\0")));
	ck_assert(!vmgenid_is_change(MSG("change@/x\0NEW_VMGENID=")));
	/* Only a variable counts, not the header string. */
	ck_assert(!vmgenid_is_change(MSG("NEW_VMGENID=1\0ACTION=change\0")));
	ck_assert(!vmgenid_is_change("", 0));
	/* A truncated key at the end of the buffer. */
	ck_assert(!vmgenid_is_change(MSG("change@/x\0NEW_VMGENID")));
}
END_TEST

int main(void)
{
	return td_run(td_suite("vmgenid", "parse", NULL, NULL, 0,
			       TD_TESTS(change_is_recognised, others_are_not)));
}
