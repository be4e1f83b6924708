// SPDX-License-Identifier: GPL-2.0
/*
 * The tool's log captured in a memfd, for the unit tests that check what a
 * refusal says.
 */
#ifndef UNIT_LIB_LOGCAP_H
#define UNIT_LIB_LOGCAP_H

/* From now on the log goes to a memfd, at @level (< 0: the level as it is). */
void logcap_start(int level);

/*
 * The text logged since logcap_start() (a static buffer, valid until the
 * next call); the log goes back to stderr at its former level. Without a
 * capture running (a teardown after a failed test): "", nothing changed.
 */
const char *logcap_stop(void);

/* Fail the test unless @log holds @expect. */
void assert_in_log(const char *log, const char *expect);

#endif
