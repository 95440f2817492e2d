/* The one reader of numeric user and group ids, shared by the config
 * loader (at check time, with the place), the task plan, `corral exec -u`
 * and the server that runs it. An id is 0..4294967294: uid_t is 32 bits,
 * so a wider number would be cut (4294967296 ran as uid 0), and
 * (uid_t)-1 is no id (setuid(-1) and chown(-1) mean "leave unchanged"). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define ID_MAX 4294967294u

enum id_text {
	ID_TEXT_NAME,         /* not all digits: a name, looked up later */
	ID_TEXT_NUMBER,       /* all digits, within 0..ID_MAX: *id is set */
	ID_TEXT_OUT_OF_RANGE, /* all digits, above ID_MAX: refuse it */
};

/* Reads `length` bytes of `text` (an empty text is a name: callers refuse
 * it as they refuse other empty names). */
enum id_text id_text_read(const char *text, size_t length, uint32_t *id);

/* "uid", "name", "uid:gid", "name:group": the first part that is a number
 * out of range, as a phrase for "-u VALUE: ..." or "user: ...", written to
 * `error`; 0 when both parts are names or ids in range, -1 otherwise. */
int id_spec_check(const char *spec, char *error, size_t error_size);
