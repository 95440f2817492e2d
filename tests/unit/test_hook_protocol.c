/* The exec hook protocol: the request a hook gets, and every way a response
 * can be wrong, each with the message that names the field. One table row
 * per mistake. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>

#include <cmocka.h>

#include "hooks/hook_protocol.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct bad_case {
	const char *what;
	enum hook_stage stage;
	const char *text;
	const char *message; /* a prefix for JSON errors, else exact */
};

static const struct bad_case bad_cases[] = {
    {"not JSON", HOOK_STAGE_PRESTART, "{nope", "invalid JSON on stdout: "},
    {"two documents", HOOK_STAGE_PRESTART, "{} {}", "invalid JSON on stdout: end of file expected"},
    {"not an object", HOOK_STAGE_PRESTART, "[1]",
     "the response must be a JSON object, not an array"},
    {"unknown field", HOOK_STAGE_PRESTART, "{\"mount\": []}", "mount: unknown field"},
    {"wrong version", HOOK_STAGE_PRESTART, "{\"version\": 2}",
     "version: 2 is not a version corral speaks (it speaks 1)"},
    {"env not an object", HOOK_STAGE_PRESTART, "{\"env\": [\"A=1\"]}",
     "env: must be an object of names to strings, not an array"},
    {"env value not a string", HOOK_STAGE_PRESTART, "{\"env\": {\"A\": 1}}",
     "env.A: must be a string, not a number"},
    {"env bad name", HOOK_STAGE_PRESTART, "{\"env\": {\"1A\": \"x\"}}",
     "env.1A: invalid variable name: use letters, digits and '_', not starting with a digit"},
    {"env corral's variable", HOOK_STAGE_PRESTART, "{\"env\": {\"CORRAL_TASK\": \"x\"}}",
     "env.CORRAL_TASK: is set by corral"},
    {"env NUL in value", HOOK_STAGE_PRESTART, "{\"env\": {\"A\": \"a\\u0000b\"}}",
     "invalid JSON on stdout: \\u0000 is not allowed"},
    {"mounts not an array", HOOK_STAGE_PRESTART, "{\"mounts\": {}}",
     "mounts: must be an array, not an object"},
    {"mount not an object", HOOK_STAGE_PRESTART, "{\"mounts\": [\"/a:/b\"]}",
     "mounts[0]: must be an object, not a string"},
    {"mount unknown field", HOOK_STAGE_PRESTART,
     "{\"mounts\": [{\"source\": \"/a\", \"target\": \"/b\", \"ro\": true}]}",
     "mounts[0].ro: unknown field"},
    {"mount without target", HOOK_STAGE_PRESTART, "{\"mounts\": [{\"source\": \"/a\"}]}",
     "mounts[0]: missing \"target\""},
    {"bind mount without source", HOOK_STAGE_PRESTART, "{\"mounts\": [{\"target\": \"/a\"}]}",
     "mounts[0]: missing \"source\" (or a \"type\" such as tmpfs)"},
    {"relative target", HOOK_STAGE_PRESTART,
     "{\"mounts\": [{\"source\": \"/a\", \"target\": \"/b\"}, {\"source\": \"/a\", "
     "\"target\": \"../etc\"}]}",
     "mounts[1].target \"../etc\": must be an absolute path inside the task"},
    {"target climbing out", HOOK_STAGE_PRESTART,
     "{\"mounts\": [{\"source\": \"/a\", \"target\": \"/srv/../../etc\"}]}",
     "mounts[0].target \"/srv/../../etc\": must be an absolute path inside the task"},
    {"target ending in ..", HOOK_STAGE_PRESTART,
     "{\"mounts\": [{\"source\": \"/a\", \"target\": \"/srv/..\"}]}",
     "mounts[0].target \"/srv/..\": must be an absolute path inside the task"},
    {"relative source", HOOK_STAGE_PRESTART,
     "{\"mounts\": [{\"source\": \"data\", \"target\": \"/b\"}]}",
     "mounts[0].source \"data\": must be an absolute path"},
    {"target not a string", HOOK_STAGE_PRESTART,
     "{\"mounts\": [{\"source\": \"/a\", \"target\": 7}]}",
     "mounts[0].target: must be a string, not a number"},
    {"readonly not a boolean", HOOK_STAGE_PRESTART,
     "{\"mounts\": [{\"source\": \"/a\", \"target\": \"/b\", \"readonly\": \"yes\"}]}",
     "mounts[0].readonly: must be a boolean, not a string"},
    {"unknown propagation", HOOK_STAGE_PRESTART,
     "{\"mounts\": [{\"source\": \"/a\", \"target\": \"/b\", \"propagation\": \"slaved\"}]}",
     "mounts[0].propagation \"slaved\": must be private, rprivate, slave, rslave, shared or "
     "rshared"},
    {"options not strings", HOOK_STAGE_PRESTART,
     "{\"mounts\": [{\"type\": \"tmpfs\", \"target\": \"/b\", \"options\": [\"size=1m\", 2]}]}",
     "mounts[0].options[1]: must be a string, not a number"},
    {"empty type", HOOK_STAGE_PRESTART, "{\"mounts\": [{\"type\": \"\", \"target\": \"/b\"}]}",
     "mounts[0].type: must not be empty"},
    {"device without source", HOOK_STAGE_PRESTART, "{\"devices\": [{\"target\": \"/dev/x\"}]}",
     "devices[0]: missing \"source\""},
    {"device bad permissions", HOOK_STAGE_PRESTART,
     "{\"devices\": [{\"source\": \"/dev/null\", \"permissions\": \"rx\"}]}",
     "devices[0].permissions \"rx\": must be letters from r, w and m, each once"},
    {"device repeated permission", HOOK_STAGE_PRESTART,
     "{\"devices\": [{\"source\": \"/dev/null\", \"permissions\": \"rr\"}]}",
     "devices[0].permissions \"rr\": must be letters from r, w and m, each once"},
    {"device empty permissions", HOOK_STAGE_PRESTART,
     "{\"devices\": [{\"source\": \"/dev/null\", \"permissions\": \"\"}]}",
     "devices[0].permissions: must not be empty (letters from r, w and m)"},
    {"device target outside", HOOK_STAGE_PRESTART,
     "{\"devices\": [{\"source\": \"/dev/null\", \"target\": \"dev/x\"}]}",
     "devices[0].target \"dev/x\": must be an absolute path inside the task"},
    {"state not an object", HOOK_STAGE_PRESTART, "{\"state\": 3}",
     "state: must be an object or null, not a number"},
    {"done not a boolean", HOOK_STAGE_PRESTART, "{\"done\": \"yes\"}",
     "done: must be a boolean, not a string"},
    {"env from a stop hook", HOOK_STAGE_STOP, "{\"env\": {}}",
     "env: only a prestart hook may return it, not a stop hook"},
    {"done from an exited hook", HOOK_STAGE_EXITED, "{\"done\": true}",
     "done: only a prestart hook may return it, not a exited hook"},
};

static void test_bad_responses(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(bad_cases); i++) {
		const struct bad_case *c = &bad_cases[i];
		struct hook_response response;
		char error[256] = "";
		print_message("%s\n", c->what);
		int result = hook_response_parse(c->text, strlen(c->text), c->stage, false,
						 &response, error, sizeof(error));
		assert_int_equal(result, -1);
		if (strncmp(c->message, "invalid JSON", 12) == 0)
			assert_memory_equal(error, c->message, strlen(c->message));
		else
			assert_string_equal(error, c->message);
		/* Nothing is kept from a response that failed. */
		assert_int_equal(response.additions.mount_count, 0);
		assert_null(response.additions.env);
		assert_null(response.state);
	}
}

static const struct bad_case host_cases[] = {
    {"missing source", HOOK_STAGE_PRESTART,
     "{\"mounts\": [{\"source\": \"/nonexistent/x\", \"target\": \"/x\"}]}",
     "mounts[0].source \"/nonexistent/x\": No such file or directory"},
    {"device source not a device", HOOK_STAGE_PRESTART, "{\"devices\": [{\"source\": \"/tmp\"}]}",
     "devices[0].source \"/tmp\": not a device node"},
    {"device source missing", HOOK_STAGE_PRESTART,
     "{\"devices\": [{\"source\": \"/dev/nonexistent-x\"}]}",
     "devices[0].source \"/dev/nonexistent-x\": No such file or directory"},
};

static void test_host_checks(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(host_cases); i++) {
		const struct bad_case *c = &host_cases[i];
		struct hook_response response;
		char error[256] = "";
		print_message("%s\n", c->what);
		/* Pure: fine without the host checks. */
		assert_int_equal(hook_response_parse(c->text, strlen(c->text), c->stage, false,
						     &response, error, sizeof(error)),
				 0);
		hook_response_free(&response);
		assert_int_equal(hook_response_parse(c->text, strlen(c->text), c->stage, true,
						     &response, error, sizeof(error)),
				 -1);
		assert_string_equal(error, c->message);
	}
}

static void test_full_response(void **state)
{
	const char *text =
	    "{\"version\": 1, \"env\": {\"A\": \"1\", \"B\": \"x=y\"},"
	    " \"mounts\": [{\"source\": \"/tmp\", \"target\": \"/data\", \"readonly\": true,"
	    " \"propagation\": \"rslave\"},"
	    " {\"type\": \"tmpfs\", \"target\": \"/scratch\", \"options\": [\"size=1m\"]}],"
	    " \"devices\": [{\"source\": \"/dev/null\", \"target\": \"/dev/hooked\","
	    " \"permissions\": \"rwm\"}, {\"source\": \"/dev/zero\"}],"
	    " \"state\": {\"made\": [\"/tmp\"]}, \"done\": true}";
	struct hook_response response;
	char error[256] = "";
	assert_int_equal(hook_response_parse(text, strlen(text), HOOK_STAGE_PRESTART, true,
					     &response, error, sizeof(error)),
			 0);
	const struct start_additions *got = &response.additions;
	assert_string_equal(got->env[0], "A=1");
	assert_string_equal(got->env[1], "B=x=y");
	assert_null(got->env[2]);
	assert_int_equal(got->mount_count, 2);
	assert_null(got->mounts[0].type);
	assert_string_equal(got->mounts[0].source, "/tmp");
	assert_string_equal(got->mounts[0].target, "/data");
	assert_true(got->mounts[0].readonly);
	assert_int_equal(got->mounts[0].propagation, MS_SLAVE | MS_REC);
	assert_string_equal(got->mounts[1].type, "tmpfs");
	assert_null(got->mounts[1].source);
	assert_string_equal(got->mounts[1].options[0], "size=1m");
	assert_null(got->mounts[1].options[1]);
	assert_int_equal(got->device_count, 2);
	assert_string_equal(got->devices[0].target, "/dev/hooked");
	assert_int_equal(got->devices[0].permissions, DEVICE_READ | DEVICE_WRITE | DEVICE_MKNOD);
	assert_null(got->devices[1].target);
	assert_int_equal(got->devices[1].permissions, DEVICE_READ | DEVICE_WRITE);
	assert_true(response.has_state);
	assert_true(json_is_object(response.state));
	assert_true(response.done);
	hook_response_free(&response);
}

static void test_empty_output_is_an_empty_response(void **state)
{
	struct hook_response response;
	char error[64];
	assert_int_equal(hook_response_parse(" \n", 2, HOOK_STAGE_PRESTART, true, &response, error,
					     sizeof(error)),
			 0);
	assert_false(response.has_state);
	assert_false(response.done);
	assert_int_equal(hook_response_parse("{\"state\": null}", 15, HOOK_STAGE_STOP, true,
					     &response, error, sizeof(error)),
			 0);
	assert_true(response.has_state);
	assert_null(response.state);
	hook_response_free(&response);
}

static void test_request(void **state)
{
	char *argv[] = {"/bin/app", "--flag", NULL};
	char *env[] = {"PATH=/bin", "A=b=c", NULL};
	struct task_config task = {
	    .name = "app", .full_name = "web/app", .argv = argv, .argc = 2, .cwd = "/srv"};
	task.isolation.enabled = true;
	task.isolation.namespaces = ISOLATION_NS_MOUNT | ISOLATION_NS_PID;
	json_t *previous = json_pack("{s:i}", "count", 2);
	struct hook_request request = {
	    .stage = HOOK_STAGE_EXITED,
	    .hook = "volumes",
	    .group = "web",
	    .task = &task,
	    .env = env,
	    .run = 3,
	    .has_exit = true,
	    .exit_code = -1,
	    .exit_signal = 9,
	    .state = previous,
	};
	size_t length;
	char *text = hook_request_build(&request, &length);
	assert_int_equal(text[length - 1], '\n');
	assert_string_equal(
	    text, "{\"version\":1,\"stage\":\"exited\",\"hook\":\"volumes\",\"group\":\"web\","
		  "\"task\":\"app\",\"run\":3,\"command\":[\"/bin/app\",\"--flag\"],"
		  "\"env\":{\"PATH\":\"/bin\",\"A\":\"b=c\"},"
		  "\"directories\":{\"root\":\"/\",\"cwd\":\"/srv\"},"
		  "\"namespaces\":[\"pid\",\"mount\"],\"exit\":{\"signal\":\"SIGKILL\"},"
		  "\"state\":{\"count\":2}}\n");
	free(text);
	json_decref(previous);
}

/* Nomad's Update hook: what a reload changed, and the limits now. */
static void test_update_request(void **state)
{
	(void)state;
	char *argv[] = {"/bin/app", NULL};
	char *env[] = {NULL};
	struct task_config task = {.name = "app", .full_name = "web/app", .argv = argv, .argc = 1};
	task.resources.memory = 128u << 20;
	task.resources.cpu_millicores = 500;
	struct hook_request request = {.stage = HOOK_STAGE_UPDATE,
				       .hook = "scale",
				       .group = "web",
				       .task = &task,
				       .env = env,
				       .run = 0,
				       .pid = 42,
				       .changed = "resources,health"};
	size_t length;
	char *text = hook_request_build(&request, &length);
	assert_string_equal(
	    text, "{\"version\":1,\"stage\":\"update\",\"hook\":\"scale\",\"group\":\"web\","
		  "\"task\":\"app\",\"run\":0,\"command\":[\"/bin/app\"],\"env\":{},"
		  "\"directories\":{\"root\":\"/\",\"cwd\":null},\"namespaces\":[],\"pid\":42,"
		  "\"changed\":[\"resources\",\"health\"],"
		  "\"resources\":{\"memory\":134217728,\"cpu\":0.5},\"state\":null}\n");
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bad_responses),
	    cmocka_unit_test(test_host_checks),
	    cmocka_unit_test(test_full_response),
	    cmocka_unit_test(test_empty_output_is_an_empty_response),
	    cmocka_unit_test(test_request),
	    cmocka_unit_test(test_update_request),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
