/* libFuzzer target: any text as a cron expression is parsed or refused
 * with a message, never a crash or a read past it; a parsed one's next
 * time comes after the start, at a valid minute of a valid day. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/text/cron.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0';
	struct cron cron;
	char error[256];
	if (cron_parse(text, &cron, error, sizeof(error)) == 0) {
		struct tm start = {.tm_year = 126,
				   .tm_mon = 10,
				   .tm_mday = 24,
				   .tm_hour = 10,
				   .tm_min = 7},
			  next;
		if (cron_next(&cron, &start, &next)) {
			long before = ((start.tm_year * 12L + start.tm_mon) * 31 + start.tm_mday) *
					  1440 +
				      start.tm_hour * 60 + start.tm_min,
			     after =
				 ((next.tm_year * 12L + next.tm_mon) * 31 + next.tm_mday) * 1440 +
				 next.tm_hour * 60 + next.tm_min;
			if (after <= before || next.tm_min > 59 || next.tm_hour > 23 ||
			    next.tm_mday < 1 || next.tm_mday > 31 || next.tm_mon > 11)
				abort();
		}
	} else if (!error[0]) {
		abort(); /* a refusal always says why */
	}
	free(text);
	return 0;
}
