#include "isolation/capabilities.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "isolation/child_code.h"

void capability_plan_build(uint64_t keep, bool non_root_user, struct capability_plan *plan)
{
	/* libcap asks the kernel how many capabilities it has; the header's
	 * CAP_LAST_CAP is only what the build machine's headers knew. */
	int bits = cap_max_bits();
	unsigned last_cap = bits > 0 ? (unsigned)bits - 1 : CAP_LAST_CAP;
	if (last_cap > 63)
		last_cap = 63;
	uint64_t known = last_cap == 63 ? UINT64_MAX : (1ull << (last_cap + 1)) - 1;

	*plan = (struct capability_plan){
	    .last_cap = last_cap,
	    .keep = keep & known,
	    .header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0},
	};
	plan->raise_ambient = non_root_user && plan->keep != 0;
	for (int i = 0; i < 2; i++) {
		uint32_t word = (uint32_t)(plan->keep >> (32 * i));
		plan->data[i] = (struct __user_cap_data_struct){
		    .effective = word, .permitted = word, .inheritable = word};
	}
}

CHILD_CODE static int failed(struct capability_failure *failure, enum capability_stage stage,
			     unsigned capability)
{
	failure->stage = stage;
	failure->capability = capability;
	return -errno;
}

CHILD_CODE int capability_plan_apply_bounding(const struct capability_plan *plan,
					      struct capability_failure *failure)
{
	if (plan->leave_bounding_set)
		return 0;
	for (unsigned cap = 0; cap <= plan->last_cap; cap++) {
		if (plan->keep & (1ull << cap))
			continue;
		if (syscall(SYS_prctl, PR_CAPBSET_DROP, cap, 0, 0, 0) == 0)
			continue;
		/* Without CAP_SETPCAP: one already gone needs no dropping, so
		 * a corral started with fewer capabilities still works. Asked
		 * only then, to keep a start at one syscall a capability. */
		if (errno != EPERM || syscall(SYS_prctl, PR_CAPBSET_READ, cap, 0, 0, 0) != 0)
			return failed(failure, CAPABILITY_STAGE_BOUNDING, cap);
	}
	return 0;
}

CHILD_CODE int capability_plan_apply_keepcaps(const struct capability_plan *plan,
					      struct capability_failure *failure)
{
	if (plan->raise_ambient && syscall(SYS_prctl, PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
		return failed(failure, CAPABILITY_STAGE_KEEPCAPS, 0);
	return 0;
}

CHILD_CODE int capability_plan_apply_sets(const struct capability_plan *plan,
					  struct capability_failure *failure)
{
	/* The kernel writes the header back only for a wrong version. */
	if (syscall(SYS_capset, &plan->header, plan->data) < 0)
		return failed(failure, CAPABILITY_STAGE_CAPSET, 0);
	if (!plan->raise_ambient)
		return 0;
	for (unsigned cap = 0; cap <= plan->last_cap; cap++)
		if ((plan->keep & (1ull << cap)) &&
		    syscall(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) < 0)
			return failed(failure, CAPABILITY_STAGE_AMBIENT, cap);
	return 0;
}

void capability_failure_describe(const struct capability_failure *failure, int error, char *buffer,
				 size_t size)
{
	char *name = cap_to_name((cap_value_t)failure->capability);
	const char *shown = name ? name : "a capability";
	switch (failure->stage) {
	case CAPABILITY_STAGE_BOUNDING:
		snprintf(buffer, size, "drop %s from the bounding set: %s", shown, strerror(error));
		break;
	case CAPABILITY_STAGE_KEEPCAPS:
		snprintf(buffer, size, "keep capabilities across setuid: %s", strerror(error));
		break;
	case CAPABILITY_STAGE_CAPSET:
		snprintf(buffer, size, "set capabilities: %s", strerror(error));
		break;
	case CAPABILITY_STAGE_AMBIENT:
		snprintf(buffer, size, "raise ambient %s: %s", shown, strerror(error));
		break;
	}
	cap_free(name);
}
