/*
 dev/tool.h: what the dev/ programs share about how they are called: -h or --help as the first
 argument prints the usage to stdout (exit 0), a wrong call its first line to stderr (exit 1:
 one line, as every error). A tool refuses an output file that is its input rather than
 overwrite a trained model (common.h's same_file).
*/
#pragma once

#include <cstdio>
#include <cstring>
#include <string>

// whether the first argument asks for the usage
inline bool help_asked(int argc, char** argv) { return argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")); }

// the usage, whole on stdout where asked for (status 0), its first line on stderr for a wrong
// call (status 1); returns the status
inline int print_usage(const char* usage, bool asked) {
    if (asked) return printf("usage: %s\n", usage), 0;
    fprintf(stderr, "usage: %.*s (--help says more)\n", (int)strcspn(usage, "\n"), usage);
    return 1;
}
