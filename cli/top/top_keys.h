/* Keys as the terminal sends them: plain bytes, and the escape sequences
 * of arrows, PgUp/PgDn and Home/End (both the CSI and the SS3 forms, as
 * xterm, tmux, screen and the Linux console send them). */
#pragma once

#include <stddef.h>

enum top_key {
	/* 0 to 255: the byte itself ('q', 13 for Enter, 27 for a lone Esc) */
	TOP_KEY_NONE = 256, /* a sequence read whole that means nothing here */
	TOP_KEY_UP,
	TOP_KEY_DOWN,
	TOP_KEY_LEFT,
	TOP_KEY_RIGHT,
	TOP_KEY_PAGE_UP,
	TOP_KEY_PAGE_DOWN,
	TOP_KEY_HOME,
	TOP_KEY_END,
};

#define TOP_KEY_ESCAPE 27

/* Decodes the first key of `bytes` (`length` > 0, all that one read()
 * gave): sets *key, returns the bytes it took. An Esc with nothing after
 * it in the read is the Esc key. */
size_t top_key_decode(const char *bytes, size_t length, int *key);
