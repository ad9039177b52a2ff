// Shared by the LSTM cell shaders: rank-2 addressing by (row, column) and the gate activations.
// Every tensor is bound with its own rank-2 shape and strides (no axis merging), so the gate
// columns j, H + j, 2H + j, 3H + j of a row are found through the column stride.

// A rank-2 tensor's offset and strides read once (see Cursor in common.glsl).
struct Matrix {
  uint offset;
  uint row;     // stride of axis 0, in elements
  uint column;  // stride of axis 1, in elements
};

Matrix matrix(uint k) {
  return Matrix(P.t[k].offset, uint(P.t[k].strides[0]), uint(P.t[k].strides[1]));
}

// Storage index of element (r, c).
uint at2(Matrix m, uint r, uint c) { return m.offset + r * m.row + c * m.column; }

float sigmoid(float v) { return 1.0 / (1.0 + exp(-v)); }
