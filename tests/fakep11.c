// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A PKCS#11 module for tests/test_pkcs11.sh: one slot with a token
 * labelled "fake" that a test tells what to do by files in the directory
 * $FAKEP11_DIR, looked at on every call:
 *   norng    the token does not set CKF_RNG
 *   removed  the token is gone: no token in the slot list, and every
 *            session call answers CKR_DEVICE_REMOVED
 *   hang     C_GenerateRandom never returns
 *   stuck    C_GenerateRandom returns 0x5a bytes
 *   remove_after  holds a number N: once N calls of C_GenerateRandom
 *            have returned bytes, the next one removes the token itself
 *            (makes "removed", deletes this file): a removal mid-read
 *            that no test's timing can miss
 * and logs each call it takes ("C_Initialize", "C_GenerateRandom N", ...)
 * to $FAKEP11_DIR/log, with " main-thread" after a call made in the
 * process's main thread.  Otherwise its bytes are the kernel's
 * (getrandom), so they pass the health tests.  Only the functions the
 * pkcs11 source calls are there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <p11-kit/pkcs11.h>

#define FAKE_SLOT 7
#define FAKE_SESSION 42

static int initialized;
static int session_open;

/* $FAKEP11_DIR/name in path (-1: no directory set). */
static int fake_path(char *path, size_t size, const char *name)
{
	const char *dir = getenv("FAKEP11_DIR");

	if (!dir)
		return -1;
	snprintf(path, size, "%s/%s", dir, name);
	return 0;
}

static FILE *fake_open(const char *name, const char *mode)
{
	char path[512];

	return fake_path(path, sizeof(path), name) ? NULL : fopen(path, mode);
}

static int flag(const char *name)
{
	char path[512];

	return fake_path(path, sizeof(path), name) == 0 && access(path, F_OK) == 0;
}

/* remove_after: the token goes once `served` calls have returned bytes. */
static void remove_when_due(unsigned long served)
{
	char path[512];
	unsigned long n;
	FILE *f = fake_open("remove_after", "re");
	int due;

	if (!f)
		return;
	due = fscanf(f, "%lu", &n) == 1 && served >= n;
	fclose(f);
	if (!due)
		return;
	f = fake_open("removed", "we");
	if (f)
		fclose(f);
	if (fake_path(path, sizeof(path), "remove_after") == 0)
		unlink(path);
}

static void note(const char *fmt, unsigned long arg)
{
	FILE *f = fake_open("log", "ae");

	if (!f)
		return;
	fprintf(f, fmt, arg);
	/* The daemon's main thread must never call into a module. */
	fputs(gettid() == getpid() ? " main-thread\n" : "\n", f);
	fclose(f);
}

static void pad(unsigned char *dst, size_t len, const char *s)
{
	memset(dst, ' ', len);
	memcpy(dst, s, strlen(s) < len ? strlen(s) : len);
}

static CK_RV fake_initialize(CK_VOID_PTR args)
{
	(void)args;
	note("C_Initialize", 0);
	if (initialized)
		return CKR_CRYPTOKI_ALREADY_INITIALIZED;
	initialized = 1;
	return CKR_OK;
}

static CK_RV fake_finalize(CK_VOID_PTR reserved)
{
	(void)reserved;
	note("C_Finalize", 0);
	if (!initialized)
		return CKR_CRYPTOKI_NOT_INITIALIZED;
	initialized = 0;
	session_open = 0;
	return CKR_OK;
}

static CK_RV fake_get_info(CK_INFO_PTR info)
{
	memset(info, 0, sizeof(*info));
	info->cryptokiVersion.major = 2;
	info->cryptokiVersion.minor = 40;
	pad(info->manufacturerID, sizeof(info->manufacturerID), "rngfeed tests");
	pad(info->libraryDescription, sizeof(info->libraryDescription),
	    "fakep11");
	return CKR_OK;
}

static CK_RV fake_get_slot_list(CK_BBOOL present, CK_SLOT_ID_PTR list,
				CK_ULONG_PTR count)
{
	CK_ULONG n = present && flag("removed") ? 0 : 1;

	if (!initialized)
		return CKR_CRYPTOKI_NOT_INITIALIZED;
	if (list) {
		if (*count < n) {
			*count = n;
			return CKR_BUFFER_TOO_SMALL;
		}
		if (n)
			list[0] = FAKE_SLOT;
	}
	*count = n;
	return CKR_OK;
}

static CK_RV fake_get_slot_info(CK_SLOT_ID slot, CK_SLOT_INFO_PTR info)
{
	if (slot != FAKE_SLOT)
		return CKR_SLOT_ID_INVALID;
	memset(info, 0, sizeof(*info));
	pad(info->slotDescription, sizeof(info->slotDescription), "fake slot");
	pad(info->manufacturerID, sizeof(info->manufacturerID), "rngfeed tests");
	info->flags = CKF_REMOVABLE_DEVICE | (flag("removed") ? 0 : CKF_TOKEN_PRESENT);
	return CKR_OK;
}

static CK_RV fake_get_token_info(CK_SLOT_ID slot, CK_TOKEN_INFO_PTR info)
{
	if (slot != FAKE_SLOT)
		return CKR_SLOT_ID_INVALID;
	if (flag("removed"))
		return CKR_TOKEN_NOT_PRESENT;
	memset(info, 0, sizeof(*info));
	pad(info->label, sizeof(info->label), "fake");
	pad(info->manufacturerID, sizeof(info->manufacturerID), "rngfeed tests");
	pad(info->model, sizeof(info->model), "fakep11");
	pad(info->serialNumber, sizeof(info->serialNumber), "0001");
	info->flags = CKF_TOKEN_INITIALIZED | (flag("norng") ? 0 : CKF_RNG);
	return CKR_OK;
}

static CK_RV fake_open_session(CK_SLOT_ID slot, CK_FLAGS flags, CK_VOID_PTR app,
			       CK_NOTIFY notify, CK_SESSION_HANDLE_PTR session)
{
	(void)flags;
	(void)app;
	(void)notify;
	note("C_OpenSession", 0);
	if (slot != FAKE_SLOT)
		return CKR_SLOT_ID_INVALID;
	if (flag("removed"))
		return CKR_TOKEN_NOT_PRESENT;
	session_open = 1;
	*session = FAKE_SESSION;
	return CKR_OK;
}

static CK_RV fake_close_session(CK_SESSION_HANDLE session)
{
	if (session != FAKE_SESSION || !session_open)
		return CKR_SESSION_HANDLE_INVALID;
	session_open = 0;
	return CKR_OK;
}

static CK_RV fake_login(CK_SESSION_HANDLE session, CK_USER_TYPE user,
			CK_UTF8CHAR_PTR pin, CK_ULONG pin_len)
{
	(void)user;
	(void)pin;
	note("C_Login %lu", pin_len);
	if (session != FAKE_SESSION || !session_open)
		return CKR_SESSION_HANDLE_INVALID;
	return CKR_OK;
}

static CK_RV fake_generate_random(CK_SESSION_HANDLE session, CK_BYTE_PTR out,
				  CK_ULONG len)
{
	static unsigned long served;	/* calls that returned bytes */
	CK_ULONG done = 0;

	note("C_GenerateRandom %lu", len);
	remove_when_due(served);
	if (flag("removed")) {
		session_open = 0;
		return CKR_DEVICE_REMOVED;
	}
	if (session != FAKE_SESSION || !session_open)
		return CKR_SESSION_HANDLE_INVALID;
	if (flag("hang")) {
		note("hanging", 0);
		for (;;)
			pause();
	}
	if (flag("stuck")) {
		memset(out, 0x5a, len);
		return CKR_OK;
	}
	while (done < len) {
		ssize_t n = getrandom(out + done, len - done, 0);

		if (n < 0)
			return CKR_DEVICE_ERROR;
		done += (CK_ULONG)n;
	}
	served++;
	return CKR_OK;
}

static CK_FUNCTION_LIST fake_functions = {
	.version = { 2, 40 },
	.C_Initialize = fake_initialize,
	.C_Finalize = fake_finalize,
	.C_GetInfo = fake_get_info,
	.C_GetSlotList = fake_get_slot_list,
	.C_GetSlotInfo = fake_get_slot_info,
	.C_GetTokenInfo = fake_get_token_info,
	.C_OpenSession = fake_open_session,
	.C_CloseSession = fake_close_session,
	.C_Login = fake_login,
	.C_GenerateRandom = fake_generate_random,
};

CK_RV C_GetFunctionList(CK_FUNCTION_LIST_PTR_PTR list)
{
	fake_functions.C_GetFunctionList = C_GetFunctionList;
	*list = &fake_functions;
	return CKR_OK;
}
