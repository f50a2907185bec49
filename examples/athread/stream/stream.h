/* STREAM for athread: sizes shared by the host and slave files. */
#ifndef STREAM_H
#define STREAM_H
#define STREAM_N (64 * 512 * 4) /* elements per array: 4 blocks per compute core */
#define STREAM_BS 512           /* elements per DMA block */
extern double a[STREAM_N], b[STREAM_N], c[STREAM_N];
extern double scalar;
#endif
