// Tree reductions over the WORKGROUP_SIZE invocations of a workgroup, in a fixed order so that
// results are deterministic. Every invocation must call them (they contain barriers), and every
// invocation gets the result.

shared float reduce_scratch[WORKGROUP_SIZE];

float workgroup_sum(float value) {
  const uint tid = gl_LocalInvocationID.x;
  reduce_scratch[tid] = value;
  barrier();
  for (uint stride = WORKGROUP_SIZE / 2u; stride > 0u; stride >>= 1) {
    if (tid < stride) reduce_scratch[tid] += reduce_scratch[tid + stride];
    barrier();
  }
  const float result = reduce_scratch[0];
  barrier();
  return result;
}

float workgroup_max(float value) {
  const uint tid = gl_LocalInvocationID.x;
  reduce_scratch[tid] = value;
  barrier();
  for (uint stride = WORKGROUP_SIZE / 2u; stride > 0u; stride >>= 1) {
    if (tid < stride) reduce_scratch[tid] = max_nan(reduce_scratch[tid], reduce_scratch[tid + stride]);
    barrier();
  }
  const float result = reduce_scratch[0];
  barrier();
  return result;
}

// Workgroups walk over `count` rows; the loop bound is uniform, so barriers inside are allowed.
#define FOR_EACH_ROW(row, count) \
  for (uint row = workgroup_linear_id(); row < (count); row += gl_NumWorkGroups.x * gl_NumWorkGroups.y)

// Row loops that work in both strategies (ONE_INVOCATION_PER_ROW in common.glsl): a row is walked
// by the whole workgroup, each invocation taking every WORKGROUP_SIZE-th element and row_sum /
// row_max combining them, or by one invocation alone. The strategy is a specialisation constant,
// so the barriers of the workgroup version are compiled out of the other.
#define ROW_LANE (ONE_INVOCATION_PER_ROW ? 0u : gl_LocalInvocationID.x)
#define ROW_STEP (ONE_INVOCATION_PER_ROW ? 1u : WORKGROUP_SIZE)
#define FOR_EACH_ROW_ANY(row, count)                                                        \
  for (uint row = ONE_INVOCATION_PER_ROW ? gl_GlobalInvocationID.x : workgroup_linear_id(); \
       row < (count);                                                                       \
       row += ONE_INVOCATION_PER_ROW ? gl_NumWorkGroups.x * WORKGROUP_SIZE                  \
                                     : gl_NumWorkGroups.x * gl_NumWorkGroups.y)

float row_sum(float value) { return ONE_INVOCATION_PER_ROW ? value : workgroup_sum(value); }
float row_max(float value) { return ONE_INVOCATION_PER_ROW ? value : workgroup_max(value); }
// The invocation that writes a row's single result.
bool row_leader() { return ONE_INVOCATION_PER_ROW || gl_LocalInvocationID.x == 0u; }
