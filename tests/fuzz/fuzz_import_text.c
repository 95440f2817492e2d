/* libFuzzer target: any bytes, read as corral import reads its inputs (a
 * systemd unit, a supervisord ini file, an ExecStart= or Environment=
 * value, a supervisord command, environment list or %-expansion, time
 * spans and sizes) give settings or an error, never a crash, a leak or a
 * read past the input; words quoted back for the shell stay one line. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/text_buffer.h"
#include "base/xmalloc.h"
#include "cli/import/ini_file.h"
#include "cli/import/python_text.h"
#include "cli/import/shell_words.h"
#include "cli/import/systemd_values.h"
#include "cli/import/systemd_words.h"
#include "cli/import/unit_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void ignore(void *context, const char *key, const char *value)
{
	(void)context;
	if (!key || !value)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xstrndup((const char *)data, size);
	struct import_report report = {0};

	char *copy = xstrdup(text);
	struct unit_file unit = {0};
	unit_file_parse(&unit, copy, "fuzz.service", &report);
	for (size_t i = 0; i < unit.count; i++)
		if (!unit.settings[i].line)
			abort();
	unit_file_free(&unit);
	free(copy);

	copy = xstrdup(text);
	struct ini_file ini = {0};
	ini_file_parse(&ini, copy, "fuzz.conf", "/", &report);
	ini_file_free(&ini);
	free(copy);

	const char *why = NULL;
	char **words = systemd_words(text, &why);
	if (words) {
		struct text_buffer out;
		text_buffer_init(&out, 64);
		shell_words_put(&out, words, true);
		shell_words_put(&out, words, false);
		free(out.text);
		string_vector_free(words);
	}
	words = python_shlex_split(text, &why);
	string_vector_free(words);
	python_key_value_pairs(text, ignore, NULL, &why);
	struct python_name names[] = {{"program_name", "x", false}, {"process_num", "3", true}};
	char missing[64];
	free(python_expand(text, names, 2, missing, sizeof(missing)));
	uint64_t value;
	bool infinite;
	systemd_timespan_ms(text, &value, &infinite);
	systemd_size_bytes(text, &value, &infinite);
	free(text);
	return 0;
}
