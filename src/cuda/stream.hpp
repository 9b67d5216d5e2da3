#pragma once
#include <utility>
// Streams and timing events. A CUstream is also the cudaStream_t cuBLAS takes, so
// the same stream orders the Triton kernels, our own (src/verify) and cuBLAS calls.

#include <cuda.h>

namespace lp {

/// Move-only owner of a non-blocking CUstream (it does not synchronise with the
/// legacy default stream, so a stray default-stream call cannot hide a race).
class Stream {
 public:
  /// Creates the stream in the current context. Throws lp::CudaError.
  Stream();
  ~Stream();
  Stream(Stream&& other) noexcept;
  Stream& operator=(Stream&& other) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  /// Blocks until everything queued so far has finished. Throws lp::CudaError;
  /// a fault in a kernel on this stream surfaces here as lp::StickyCudaError.
  void synchronize() const;

  [[nodiscard]] CUstream get() const noexcept { return m_stream; }

 private:
  CUstream m_stream = nullptr;
};

/// Waits for `stream` when it goes out of scope, also while an exception unwinds, so
/// device scratch memory declared before the guard is never freed under work still
/// queued on the stream. A failure there is logged, not thrown (it runs in a destructor).
class StreamDrain {
 public:
  explicit StreamDrain(const Stream& stream) noexcept : m_stream(stream.get()) {}
  ~StreamDrain();
  /// The work was handed on (to an owner that waits for it): do not wait here.
  void dismiss() noexcept { m_stream = nullptr; }
  StreamDrain(const StreamDrain&) = delete;
  StreamDrain& operator=(const StreamDrain&) = delete;

 private:
  CUstream m_stream;
};

/// Move-only owner of a CUevent with timing enabled.
class Event {
 public:
  /// Creates the event in the current context. Throws lp::CudaError.
  Event();
  ~Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  /// Records the event at the current end of `stream`. Throws lp::CudaError.
  void record(const Stream& stream) const;
  /// Blocks until the recorded work has finished. Throws lp::CudaError.
  void synchronize() const;

  [[nodiscard]] CUevent get() const noexcept { return m_event; }

 private:
  CUevent m_event = nullptr;
};

/// Milliseconds of GPU time between two recorded events (resolution about 0.5 us);
/// waits for `stop` first. Throws lp::CudaError, e.g. when either was never recorded.
[[nodiscard]] float elapsed_ms(const Event& start, const Event& stop);

/// Events recorded around work queued on a stream and read once the stream has
/// passed them: several pieces of work timed, one wait at the end.
class GpuSpan {
 public:
  /// Records the start event, queues `enqueue()`'s work, records the stop event.
  template <class Work>
  void time(const Stream& stream, Work&& enqueue) {
    m_start.record(stream);
    enqueue();
    m_stop.record(stream);
  }
  /// Milliseconds between the two; waits for the stop event. Throws lp::CudaError.
  [[nodiscard]] double ms() const { return static_cast<double>(elapsed_ms(m_start, m_stop)); }

 private:
  Event m_start;
  Event m_stop;
};

/// GPU time in ms of the work `enqueue()` puts on `stream` (events recorded around
/// it; waits for the work to finish). Throws whatever enqueue throws, lp::CudaError.
template <class Work>
[[nodiscard]] double time_on_stream(const Stream& stream, Work&& enqueue) {
  GpuSpan span;
  span.time(stream, std::forward<Work>(enqueue));
  return span.ms();
}

}  // namespace lp
