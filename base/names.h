/* The one rule for group and task names, shared by the config loader and
 * the control protocol. Names end up in log prefixes, the control protocol
 * and (later) cgroup paths, so they keep to a safe, predictable alphabet. */
#pragma once

#include <stddef.h>

#define NAME_MAX_LENGTH 64

/* NULL when `name` (which may hold a NUL: length counts) is valid, else a
 * phrase that completes "the name ...": "is empty", "is longer than 64
 * characters", "may only use lowercase letters, ...". */
const char *name_problem(const char *name, size_t length);
