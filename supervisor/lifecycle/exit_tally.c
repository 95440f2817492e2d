#include "supervisor/lifecycle/exit_tally.h"

void exit_tally_add(struct exit_tally *tally, bool signaled, int value)
{
	for (unsigned i = 0; i < tally->slot_count; i++) {
		struct exit_tally_slot *slot = &tally->slots[i];
		if (slot->signaled == signaled && slot->value == value) {
			slot->count++;
			return;
		}
	}
	if (tally->slot_count < EXIT_TALLY_SLOTS) {
		tally->slots[tally->slot_count++] =
		    (struct exit_tally_slot){.signaled = signaled, .value = value, .count = 1};
		return;
	}
	if (signaled)
		tally->other_signals++;
	else
		tally->other_codes++;
}
