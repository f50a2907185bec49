/* Included first by the wrapper through which ldmsim_add_athread_program compiles a C slave file as C++
 * (docs/athread.md "How slave files are compiled"): the C library and ldmsim's headers with their C++ parts,
 * then the spellings C allows and C++ does not: restrict, _Bool, and C++ keywords that are ordinary identifiers
 * in C (`double *new;`). Not a Sunway header. */
#ifndef LDMSIM_SLAVE_PRELUDE_H
#define LDMSIM_SLAVE_PRELUDE_H

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <malloc.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#if __has_include(<complex.h>)
#include <complex.h>
#endif
#include <fenv.h>
#include <pthread.h>
#if __has_include(<tgmath.h>)
#include <tgmath.h>
#endif
#if __has_include(<omp.h>)
#include <omp.h>
#endif

#include "crts.h"
#include "dma.h"
#include "simd.h"
#include "slave.h"

#define restrict __restrict
#define _Bool bool
#define new ldmsim_c_new
#define delete ldmsim_c_delete
#define class ldmsim_c_class
#define this ldmsim_c_this
#define template ldmsim_c_template
#define typename ldmsim_c_typename
#define namespace ldmsim_c_namespace
#define operator ldmsim_c_operator
#define private ldmsim_c_private
#define protected ldmsim_c_protected
#define public ldmsim_c_public
#define friend ldmsim_c_friend
#define virtual ldmsim_c_virtual
#define explicit ldmsim_c_explicit
#define mutable ldmsim_c_mutable
#define using ldmsim_c_using
#define throw ldmsim_c_throw
#define try ldmsim_c_try
#define catch ldmsim_c_catch

#endif
