/* version.h — hetsim's version (runs.version and `hetsim --version`). The source commit
 * comes from the build (build/.../commit.h, written by the Makefile from git). */
#ifndef BASE_VERSION_H
#define BASE_VERSION_H

#define HETSIM_VERSION "0.1.0"

#endif
