/* Which variable names inspect masks the values of. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "supervisor/control/task_inspect.h"

static bool secret(const char *name)
{
	return inspect_name_is_secret(name, strlen(name));
}

static void test_secret_names(void **state)
{
	(void)state;
	const char *secrets[] = {
	    "DB_PASSWORD",   "password",        "MYSQL_ROOT_PASSWD",
	    "API_TOKEN",     "GITHUB_TOKEN",    "AWS_SECRET_ACCESS_KEY",
	    "client_secret", "SSH_PRIVATE_KEY", "STRIPE_API_KEY",
	    "KEY",           "signing_key",     "GOOGLE_APPLICATION_CREDENTIALS"};
	for (size_t i = 0; i < sizeof(secrets) / sizeof(secrets[0]); i++)
		if (!secret(secrets[i]))
			fail_msg("%s is not masked", secrets[i]);
}

static void test_ordinary_names(void **state)
{
	(void)state;
	const char *plain[] = {"PATH",      "HOME", "MODE",        "KEYBOARD_LAYOUT",
			       "KEY_COUNT", "LANG", "CORRAL_TASK", "NOTIFY_SOCKET"};
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		if (secret(plain[i]))
			fail_msg("%s is masked", plain[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_secret_names),
	    cmocka_unit_test(test_ordinary_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
