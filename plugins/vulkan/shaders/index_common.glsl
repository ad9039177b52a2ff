// Addressing for GATHER and SCATTER_ADD. t[0] is the tensor indexed along the axis (x or src),
// t[1] the indices (1-D), t[2] out; u[0] = axis, u[1] = 1 for I64 indices, u[2] = size of the
// indexed tensor's axis (gather: x; scatter: out), u[3] = number of indices L.

// For element `linear` of tensor `walked` (row-major over its shape): its coordinate on the axis,
// and the offset in tensor `other` of the element with the same coordinates except that the axis
// coordinate is `axis_value` (pass 0 and add axis_value * stride later when it is not known yet).
uint offset_with_axis(uint walked, uint other, uint linear, uint axis, out uint axis_coord) {
  uint offset = 0u;
  axis_coord = 0u;
  for (int d = int(P.t[walked].rank) - 1; d >= 0; --d) {
    const uint size = uint(P.t[walked].shape[d]);
    const uint coord = linear % size;
    linear /= size;
    if (uint(d) == axis) {
      axis_coord = coord;
    } else {
      offset += coord * uint(P.t[other].strides[d]);
    }
  }
  return offset;
}
