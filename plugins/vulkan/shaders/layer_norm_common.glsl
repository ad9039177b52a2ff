// Storage of the mean/rstd tensors of the layer-norm shaders: the data type, or f32 when the
// module is compiled with STATS_F32 (ops.md allows f32 statistics with f16/bf16 data).
#if defined(DT_F32) || defined(STATS_F32)
#define STATS_T float
#define STATS_TO_F(v) (v)
#define STATS_FROM_F(v) (v)
#else
#define STATS_T STORAGE_T
#define STATS_TO_F(v) TO_F(v)
#define STATS_FROM_F(v) FROM_F(v)
#endif
