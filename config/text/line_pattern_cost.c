/* What a readiness.log pattern costs, read before TRE compiles it: a
 * back-reference is refused (only a backtracking matcher can follow one,
 * in time exponential in the line), and so is a pattern whose repetitions,
 * multiplied out, would make every line slow (line_pattern.h). The walk
 * knows ERE's shape only as far as cost needs: atoms, bracket
 * expressions, groups and the repetition operators; TRE says the rest. */
#include <stdio.h>
#include <string.h>

#include "config/text/line_pattern.h"

/* Past this a count only needs to stay past both limits. */
#define COUNT_CEILING   (1u << 30)
#define GROUP_DEPTH_MAX 64

struct cost {
	unsigned positions, loops;
};

struct group {
	struct cost total; /* the group so far, its last item included */
	struct cost last;  /* the last item, which an operator applies to */
	bool has_last;
};

static unsigned saturating(unsigned long long value)
{
	return value > COUNT_CEILING ? COUNT_CEILING : (unsigned)value;
}

static void add_item(struct group *group, struct cost item)
{
	group->total.positions =
	    saturating((unsigned long long)group->total.positions + item.positions);
	group->total.loops = saturating((unsigned long long)group->total.loops + item.loops);
	group->last = item;
	group->has_last = true;
}

/* Replaces the group's last item by `item` (an operator applied to it). */
static void replace_last(struct group *group, struct cost item)
{
	group->total.positions -= group->last.positions;
	group->total.loops -= group->last.loops;
	add_item(group, item);
}

/* The end of a bracket expression opened at `text[at]` ('['), or 0 when
 * it has none (TRE says so). */
static size_t bracket_end(const char *text, size_t at)
{
	size_t i = at + 1;
	if (text[i] == '^')
		i++;
	if (text[i] == ']')
		i++;
	for (; text[i]; i++) {
		if (text[i] == ']')
			return i;
		if (text[i] == '[' && strchr(":.=", text[i + 1]) && text[i + 1]) {
			char close[3] = {text[i + 1], ']', 0};
			const char *end = strstr(text + i + 2, close);
			if (!end)
				return 0;
			i = (size_t)(end - text) + 1;
		}
	}
	return 0;
}

/* TRE's RE_DUP_MAX: a larger count is not an interval to it. */
#define COUNT_MAX 255

/* `{n}`, `{n,}`, `{n,m}` or `{,m}` at `text[at]`: its end, and the copies
 * it makes and the optional ones among them, and its larger count in
 * `*largest`; 0 when it is not one. */
static size_t interval_parse(const char *text, size_t at, unsigned *copies, unsigned *optional,
			     unsigned *largest)
{
	size_t i = at + 1;
	unsigned low = 0, high = 0;
	bool has_low = false, has_comma = false, has_high = false;
	for (; text[i] >= '0' && text[i] <= '9'; i++, has_low = true)
		low = saturating((unsigned long long)low * 10 + (unsigned)(text[i] - '0'));
	if (text[i] == ',') {
		has_comma = true;
		for (i++; text[i] >= '0' && text[i] <= '9'; i++, has_high = true)
			high =
			    saturating((unsigned long long)high * 10 + (unsigned)(text[i] - '0'));
	}
	if (text[i] != '}' || (!has_low && !has_high))
		return 0;
	*largest = high > low ? high : low;
	if (!has_comma) {
		*copies = low;
		*optional = 0;
	} else if (!has_high) {
		*copies = saturating((unsigned long long)low + 1);
		*optional = 1; /* the last copy loops */
	} else {
		*copies = high > low ? high : low;
		*optional = high > low ? high - low : 0;
	}
	return i;
}

static int refuse_size(const char *text, size_t at, struct cost cost, size_t *offset, char *error,
		       size_t error_size)
{
	*offset = at;
	if (cost.positions > LINE_PATTERN_POSITIONS_MAX)
		snprintf(error, error_size,
			 "has %s%u characters and classes once its {n,m} repetitions are "
			 "multiplied out, more than %d: every line of output would cost as much "
			 "in corral's one loop, which every task waits on; repeat less (a{3,} for "
			 "a{3,300}, .* for .{0,300})",
			 cost.positions >= COUNT_CEILING ? "over " : "", cost.positions,
			 LINE_PATTERN_POSITIONS_MAX);
	else
		snprintf(error, error_size,
			 "has %s%u repetition operators (*, +, ?, and the optional copies of "
			 "{n,m}) once its {n,m} repetitions are multiplied out, more than %d: each "
			 "line's cost in corral's one loop, which every task waits on, grows with "
			 "their square; write one .* for a run of them ((.*a){40}b as .*a.*b if "
			 "the count does not matter)",
			 cost.loops >= COUNT_CEILING ? "over " : "", cost.loops,
			 LINE_PATTERN_LOOPS_MAX);
	return -1;
}

static bool too_costly(struct cost cost)
{
	return cost.positions > LINE_PATTERN_POSITIONS_MAX || cost.loops > LINE_PATTERN_LOOPS_MAX;
}

int line_pattern_check_cost(const char *text, size_t *offset, char *error, size_t error_size)
{
	struct group groups[GROUP_DEPTH_MAX + 1] = {0};
	size_t depth = 0;
	for (size_t i = 0; text[i]; i++) {
		struct group *group = &groups[depth];
		unsigned copies, optional, largest;
		size_t end;
		switch (text[i]) {
		case '\\':
			if (text[i + 1] >= '1' && text[i + 1] <= '9') {
				*offset = i;
				snprintf(
				    error, error_size,
				    "\\%c is a back-reference, which corral refuses: matching one "
				    "can "
				    "take time exponential in the line's length, in corral's one "
				    "loop, which every task waits on; write the text it stands for "
				    "again ((ab)\\1 as (ab)ab), or a class that covers it ([0-9]+)",
				    text[i + 1]);
				return -1;
			}
			if (!text[i + 1])
				return 0; /* TRE says what is wrong */
			add_item(group, (struct cost){1, 0});
			i++;
			break;
		case '[':
			if (!(end = bracket_end(text, i)))
				return 0;
			add_item(group, (struct cost){1, 0});
			i = end;
			break;
		case '(':
			if (depth == GROUP_DEPTH_MAX)
				return 0; /* deeper than any pattern a line needs: TRE decides */
			groups[++depth] = (struct group){0};
			break;
		case ')':
			if (!depth)
				return 0;
			depth--;
			add_item(&groups[depth], groups[depth + 1].total);
			break;
		case '|':
			group->has_last = false;
			break;
		case '*':
		case '+':
		case '?':
			if (group->has_last)
				replace_last(
				    group,
				    (struct cost){
					group->last.positions,
					saturating((unsigned long long)group->last.loops + 1)});
			break;
		case '{':
			if (!(end = interval_parse(text, i, &copies, &optional, &largest))) {
				add_item(group, (struct cost){1, 0});
				break;
			}
			if (largest > COUNT_MAX) {
				*offset = i;
				snprintf(
				    error, error_size,
				    "a count of %u: counts go to %d at most (glibc's regcomp took "
				    "more; TRE, which matches in time linear in the line, does "
				    "not); "
				    "write + for \"at least once\", or a smaller count",
				    largest, COUNT_MAX);
				return -1;
			}
			if (group->has_last) {
				struct cost item = {
				    saturating((unsigned long long)group->last.positions * copies),
				    saturating((unsigned long long)group->last.loops * copies +
					       optional)};
				if (too_costly(item))
					return refuse_size(text, i, item, offset, error,
							   error_size);
				replace_last(group, item);
			}
			i = end;
			break;
		case '^':
		case '$':
			break;
		default:
			add_item(group, (struct cost){1, 0});
		}
	}
	if (depth)
		return 0; /* an open group: TRE says so */
	if (too_costly(groups[0].total))
		return refuse_size(text, 0, groups[0].total, offset, error, error_size);
	return 0;
}
