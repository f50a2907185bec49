/* 7-point 3-D stencil for athread: grid sizes shared by the host and slave files. Core (row r, col c) updates
 * interior plane z = 1 + r, columns x in [1 + 8c, 9 + 8c), every interior y. */
#ifndef STENCIL_H
#define STENCIL_H
#define NZ 10
#define NY 34
#define NX 66
#define TX 8
#define STEPS 4
#define C0 0.5
#define C1 (1.0 / 12.0)
typedef struct {
  double* a;
  double* b;
} stencil_arg;
#endif
