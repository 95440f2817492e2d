/* Probe targets that name the instance (config/text/instance_template.h): what
 * each form gives, and where a malformed one fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "config/text/instance_template.h"

static void expect_text(const char *text, unsigned instance, const char *expected)
{
	char out[128];
	struct instance_template_error error;
	assert_int_equal(instance_template_expand(text, instance, out, sizeof(out), &error), 0);
	assert_string_equal(out, expected);
}

static void expect_error(const char *text, size_t offset, const char *message)
{
	char out[128];
	struct instance_template_error error;
	assert_int_equal(instance_template_expand(text, 3, out, sizeof(out), &error), -1);
	assert_int_equal(error.offset, offset);
	assert_string_equal(error.message, message);
}

static void test_forms(void **state)
{
	(void)state;
	assert_false(instance_template_used("8080"));
	assert_true(instance_template_used("$((8000 + CORRAL_INSTANCE))"));
	expect_text("8080", 3, "8080");
	expect_text("$((8000 + CORRAL_INSTANCE))", 3, "8003");
	expect_text("$((8000+$CORRAL_INSTANCE*10))", 2, "8020");
	expect_text("$(( (CORRAL_INSTANCE + 1) * 100 - 1 ))", 4, "499");
	expect_text("$((100*(1+(CORRAL_INSTANCE))))", 1, "200");
	expect_text("127.0.0.1:$((9000 + CORRAL_INSTANCE))", 0, "127.0.0.1:9000");
	expect_text("/run/app-${CORRAL_INSTANCE}.sock", 12, "/run/app-12.sock");
	expect_text("/i/$CORRAL_INSTANCE/x", 5, "/i/5/x");
	expect_text("/cost$$/$CORRAL_INSTANCE", 1, "/cost$/1");
	/* The field refuses a negative port, not the expansion. */
	expect_text("$((1 - CORRAL_INSTANCE))", 3, "-2");
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("/run/x-${CORRAL_INSTANSE}.sock", 7,
		     "${CORRAL_INSTANSE}: a probe target takes $CORRAL_INSTANCE, "
		     "${CORRAL_INSTANCE} and $((...)) of it (write $$ for a literal $)");
	expect_error("$PORT", 0,
		     "$PORT: a probe target takes $CORRAL_INSTANCE, ${CORRAL_INSTANCE} and "
		     "$((...)) of it (write $$ for a literal $)");
	expect_error("${CORRAL_INSTANCE", 0,
		     "${CORRAL_INSTANCE: a probe target takes $CORRAL_INSTANCE, "
		     "${CORRAL_INSTANCE} and $((...)) of it (write $$ for a literal $)");
	expect_error("80$((8000 + CORRAL_INSTANCE)", 2, "$(( is not closed with ))");
	expect_error("$((8000 + PORT))", 0,
		     "the only variable here is CORRAL_INSTANCE in "
		     "$((8000 + PORT))");
	expect_error("$((8000 +))", 0, "an operand is missing in $((8000 +))");
	expect_error("$((8000 / 2))", 0, "expected + - * or )) in $((8000 / 2))");
	expect_error("$(((1 + 2))", 0, "$(( is not closed with ))");
	expect_error("$((99999999999))", 0, "a number is too large in $((99999999999))");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_forms),
	    cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
