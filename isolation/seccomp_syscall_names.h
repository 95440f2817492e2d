/* libseccomp's syscall tables, in the form config/ checks names with
 * (config/text/syscall_names.h). */
#pragma once

#include "config/text/syscall_names.h"

const struct syscall_table *seccomp_syscall_names(void);
