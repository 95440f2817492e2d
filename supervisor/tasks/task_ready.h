/* A running task as supervisor/lifecycle/ready_rule.h reads it. The status
 * reply is written from these values (status_reply.c), and GET /readyz
 * and the READY=1 corral sends its own parent judge them: what they say
 * is what `corral status --ready` says, reading that reply. */
#pragma once

#include <stdint.h>

#include "supervisor/lifecycle/ready_rule.h"
#include "supervisor/tasks/task.h"

struct ready_rule_facts task_ready_facts(const struct task *task, uint64_t now_ms);
