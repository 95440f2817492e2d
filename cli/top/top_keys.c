/* Decoding the keys of a terminal in raw mode. */
#include "cli/top/top_keys.h"

#include <stdbool.h>

/* The key of CSI/SS3 final byte `final`, for the sequences without a
 * number (ESC [ A, ESC O H). */
static int letter_key(char final)
{
	switch (final) {
	case 'A':
		return TOP_KEY_UP;
	case 'B':
		return TOP_KEY_DOWN;
	case 'C':
		return TOP_KEY_RIGHT;
	case 'D':
		return TOP_KEY_LEFT;
	case 'H':
		return TOP_KEY_HOME;
	case 'F':
		return TOP_KEY_END;
	default:
		return TOP_KEY_NONE;
	}
}

/* ESC [ N ~: 1 and 7 Home, 4 and 8 End (rxvt, the Linux console), 5 and
 * 6 PgUp and PgDn. */
static int tilde_key(int number)
{
	switch (number) {
	case 1:
	case 7:
		return TOP_KEY_HOME;
	case 4:
	case 8:
		return TOP_KEY_END;
	case 5:
		return TOP_KEY_PAGE_UP;
	case 6:
		return TOP_KEY_PAGE_DOWN;
	default:
		return TOP_KEY_NONE;
	}
}

size_t top_key_decode(const char *bytes, size_t length, int *key)
{
	*key = (unsigned char)bytes[0];
	if (bytes[0] != TOP_KEY_ESCAPE || length == 1)
		return 1;
	if (bytes[1] == 'O' && length >= 3) {
		*key = letter_key(bytes[2]);
		return 3;
	}
	if (bytes[1] != '[') {
		/* Alt+key sends ESC then the key: take Esc alone. */
		return 1;
	}
	/* CSI: parameters (digits and ';'), then one final byte. */
	int number = 0;
	bool first = true;
	for (size_t at = 2; at < length; at++) {
		char byte = bytes[at];
		if (byte >= '0' && byte <= '9') {
			if (first && number < 1000)
				number = number * 10 + (byte - '0');
			continue;
		}
		if (byte == ';') {
			first = false; /* modifiers: Shift+Up is still Up */
			continue;
		}
		if (byte >= 0x40 && byte <= 0x7e) {
			*key = byte == '~' ? tilde_key(number) : letter_key(byte);
			return at + 1;
		}
		*key = TOP_KEY_NONE;
		return at + 1;
	}
	/* Cut short by the read: nothing to make of it. */
	*key = TOP_KEY_NONE;
	return length;
}
