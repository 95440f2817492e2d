/* The exec hook protocol (docs/hooks.md): one JSON request on the hook's
 * stdin, one JSON response on its stdout. Building the request and reading
 * the response are functions over buffers, with no process in sight, so
 * that every malformed response is unit-tested (and can be fuzzed). */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "config/model/config.h"

/* The version corral speaks. A request says it; a response may, and then
 * must say the same. */
#define HOOK_PROTOCOL_VERSION 1

/* More than this on stdout is a failure, not a response. */
#define HOOK_RESPONSE_MAX_BYTES (1u << 20)

struct hook_request {
	enum hook_stage stage;
	const char *hook;  /* its name */
	const char *group; /* the group's name */
	const struct task_config *task;
	char *const *env; /* the task's environment, before hook additions */
	unsigned run;     /* 0 for the first start, then one more per restart */
	pid_t pid;        /* poststart, prekill: the task's main process; else 0 */
	/* exited: how the process ended; code -1 when killed by `signal`. */
	bool has_exit;
	int exit_code;
	int exit_signal;
	const json_t *state; /* what the hook returned last time; NULL: nothing */
	const char *changed; /* update: the keys a reload changed, "resources,health" */
};

/* The names of ISOLATION_NS_* flags, ["pid", "mount"], and the limits
 * that are set, {"memory": bytes, "cpu": cores, ...}: as hook requests and
 * `corral inspect` show them. */
json_t *namespace_list_json(unsigned namespaces);
json_t *resources_json(const struct resources_config *resources);

/* The request as one JSON document ending in a newline; the caller frees
 * it. */
char *hook_request_build(const struct hook_request *request, size_t *length);

struct hook_response {
	struct start_additions additions; /* prestart only */
	bool has_state;
	json_t *state; /* with has_state: the new state (NULL for JSON null) */
	bool done;     /* prestart only: do not run again, keep this result */
};

/* Reads the hook's stdout (empty: an empty response). 0, or -1 with
 * `error` naming the field and what is wrong with it, e.g.
 * `mounts[1].target "../etc": must be an absolute path inside the task`.
 * With `check_host`, also that a bind mount's source exists and a device's
 * source is a device node (stat); without, a pure function of the text. */
int hook_response_parse(const char *text, size_t length, enum hook_stage stage, bool check_host,
			struct hook_response *out, char *error, size_t error_size);

/* How hook_response_parse reads the text as JSON. */
#define HOOK_RESPONSE_JSON_FLAGS JSON_REJECT_DUPLICATES

/* The second half of hook_response_parse: the response from the JSON
 * value the text was read as (only read here; `out` may keep references
 * into it). The fuzzer reads a text once and checks it for every stage. */
int hook_response_from_json(const json_t *root, enum hook_stage stage, bool check_host,
			    struct hook_response *out, char *error, size_t error_size);

void hook_response_free(struct hook_response *response);
