#include "supervisor/control/control_admission.h"

enum control_admission control_admission_decide(const struct control_admission_limits *limits,
						const struct control_admission_counts *counts,
						bool owner)
{
	if (owner) {
		if (counts->total < limits->total)
			return CONTROL_ADMIT;
		return counts->any_idle ? CONTROL_ADMIT_AFTER_CLOSING_IDLE : CONTROL_REFUSE_FULL;
	}
	if (counts->of_this_user >= limits->per_user)
		return CONTROL_REFUSE_USER_LIMIT;
	size_t shared = limits->total > limits->reserved_for_owners
			    ? limits->total - limits->reserved_for_owners
			    : 0;
	return counts->total < shared ? CONTROL_ADMIT : CONTROL_REFUSE_FULL;
}
