#pragma once
// Hand-written PTX for the GPU tests of src/cuda: small enough to read, so a
// failure is about the wrapper, not the kernel.

namespace lp::test_ptx {

/// lp_store(u64 address, u32 value): *address = value, from one thread.
inline constexpr const char* k_store_kernel = R"(.version 8.0
.target sm_90
.address_size 64

.visible .entry lp_store(
  .param .u64 lp_store_address,
  .param .u32 lp_store_value
)
{
  .reg .b64 %rd<3>;
  .reg .b32 %r<2>;
  ld.param.u64 %rd1, [lp_store_address];
  ld.param.u32 %r1, [lp_store_value];
  cvta.to.global.u64 %rd2, %rd1;
  st.global.u32 [%rd2], %r1;
  ret;
}
)";

/// Does not assemble: an undeclared register.
inline constexpr const char* k_broken_kernel = R"(.version 8.0
.target sm_90
.address_size 64

.visible .entry lp_broken()
{
  mov.u32 %undeclared, 1;
  ret;
}
)";

}  // namespace lp::test_ptx
