#include "sweep/worker_client.hpp"

#include <csignal>

#include <fmt/format.h>

#include "util/error.hpp"
#include "util/escape.hpp"
#include "util/interrupt.hpp"

namespace lp::sweep {

using Clock = std::chrono::steady_clock;

WorkerClient::WorkerClient(const std::vector<std::string>& argv, std::chrono::seconds start_timeout,
                           WorkerStart start)
    : m_child(argv), m_start_deadline(Clock::now() + start_timeout) {
  if (start == WorkerStart::wait) {
    wait_ready();
  }
}

void WorkerClient::wait_ready() {
  if (m_ready) {
    return;
  }
  std::string problem;
  bool timed_out = false;
  const std::optional<Received> hello = receive(m_start_deadline, problem, timed_out);
  if (!hello) {
    throw EnvironmentError(fmt::format("the GPU worker did not start: {}", problem));
  }
  take_hello(hello->reply, hello->line);
}

void WorkerClient::say_stray(const std::string& line) const {
  // A line that is no message (a library, or a kernel's printf, on the worker's stdout):
  // skipped, but said, its first 300 bytes with every control escaped for the terminal.
  fmt::print(stderr, "sweep: worker {}: {}\n", m_child.pid(), escape::terminal_line(std::string_view(line).substr(0, 300)));
}

bool WorkerClient::poll_ready() {
  while (!m_ready) {
    bool timed_out = false;
    const std::optional<std::string> line =
        m_child.read_line(Clock::now() + std::chrono::milliseconds(1), timed_out);
    if (!line) {
      if (timed_out) {
        return false;  // still starting
      }
      wait_ready();  // it died: says how
      return true;
    }
    if (const std::optional<protocol::Reply> hello = protocol::parse_reply(*line)) {
      take_hello(*hello, *line);
    } else {
      say_stray(*line);
    }
  }
  return true;
}

void WorkerClient::take_hello(const protocol::Reply& hello, const std::string& line) {
  if (const auto* fatal = std::get_if<protocol::StartFailure>(&hello)) {
    m_alive = false;
    m_child.kill();
    throw EnvironmentError(fmt::format("running a sweep needs a Hopper (sm_90) GPU: {}; `loraprobe inspect` "
                                       "checks the SASS without one",
                                       fatal->error.empty() ? "the GPU worker could not start" : fatal->error));
  }
  const auto* ready = std::get_if<protocol::Ready>(&hello);
  if (ready == nullptr) {
    throw EnvironmentError(fmt::format("the GPU worker said {} instead of ready", line.substr(0, 300)));
  }
  m_gpu = ready->gpu;
  m_ready = true;
}

std::optional<WorkerClient::Received> WorkerClient::receive(Clock::time_point deadline, std::string& problem,
                                                            bool& timed_out) {
  while (true) {
    std::optional<std::string> line = m_child.read_line(deadline, timed_out);
    if (!line) {
      m_alive = false;
      if (timed_out) {
        const ChildExit e = m_child.kill();
        problem = fmt::format("no answer before the deadline; worker {} killed ({})", m_child.pid(), e.describe());
      } else {
        problem = fmt::format("worker {} exited without answering ({})", m_child.pid(), reap().describe());
      }
      return std::nullopt;
    }
    if (std::optional<protocol::Reply> reply = protocol::parse_reply(*line)) {
      return Received{std::move(*reply), std::move(*line)};
    }
    say_stray(*line);
  }
}

ChildExit WorkerClient::reap() {
  m_alive = false;
  const ChildExit e = m_child.kill(std::chrono::seconds(5));
  // Stopped from outside, not faulted: a terminal's Ctrl-C (or `timeout -s INT`) signals
  // the whole process group, the worker with it. The case did not run and is not
  // journaled; the sweep stops as interrupted, and --resume runs it again.
  if (e.term_signal == SIGINT || e.term_signal == SIGTERM || e.term_signal == SIGHUP || e.term_signal == SIGQUIT) {
    throw Interrupted(e.term_signal);
  }
  return e;
}

bool WorkerClient::send(const protocol::Request& request) {
  if (!m_alive) {
    return false;
  }
  if (!m_child.send_line(protocol::to_line(request))) {
    // The worker is gone. It may have died of the same Ctrl-C that is about to stop
    // this process, before we read its end (found in runner_cpu_test: a case was then
    // recorded as a fault): its exit says which.
    reap();
    return false;
  }
  return true;
}

std::vector<protocol::LoadResult> WorkerClient::load(const std::vector<protocol::LoadItem>& items,
                                                     std::chrono::seconds timeout) {
  std::vector<protocol::LoadResult> results;
  auto fail_all = [&](const std::string& why) {
    results.clear();
    for (const protocol::LoadItem& item : items) {
      protocol::LoadResult r;
      r.key = item.image.key();
      r.error = why;
      results.push_back(std::move(r));
    }
    return results;
  };
  wait_ready();
  if (!send(protocol::LoadBatch{items})) {
    return fail_all("the GPU worker is gone");
  }
  std::string problem;
  bool timed_out = false;
  std::optional<Received> answer = receive(Clock::now() + timeout, problem, timed_out);
  if (!answer) {
    return fail_all(problem);
  }
  auto* batch = std::get_if<protocol::LoadedBatch>(&answer->reply);
  if (batch == nullptr) {
    return fail_all(fmt::format("unexpected answer {}", answer->line.substr(0, 300)));
  }
  for (protocol::LoadResult& r : batch->results) {
    if (r.ok) {
      m_loaded.insert(r.key);
    }
    results.push_back(std::move(r));
  }
  return results;
}

protocol::JobResult WorkerClient::run(const protocol::Job& job, std::chrono::seconds timeout) {
  using protocol::JobResult;
  using protocol::RunOutcome;
  if (!send_job(job)) {
    return JobResult::lost(job.index, job.case_id, RunOutcome::fault, "the GPU worker was gone before the case started");
  }
  return result(job, timeout);
}

bool WorkerClient::send_job(const protocol::Job& job) {
  wait_ready();
  return send(protocol::RunJob{job});
}

protocol::JobResult WorkerClient::result(const protocol::Job& job, std::chrono::seconds timeout) {
  using protocol::JobResult;
  using protocol::RunOutcome;
  if (!m_alive) {
    return JobResult::lost(job.index, job.case_id, RunOutcome::fault, "the GPU worker was gone before the case started");
  }
  std::string problem;
  bool timed_out = false;
  const std::optional<Received> answer = receive(Clock::now() + timeout, problem, timed_out);
  if (!answer) {
    return timed_out ? JobResult::lost(job.index, job.case_id, RunOutcome::timeout,
                                       fmt::format("exceeded --case-timeout {} s: {}", timeout.count(), problem))
                     : JobResult::lost(job.index, job.case_id, RunOutcome::fault, problem);
  }
  const auto* answered = std::get_if<protocol::JobAnswer>(&answer->reply);
  if (answered == nullptr) {
    return JobResult::lost(job.index, job.case_id, RunOutcome::incomplete,
                           fmt::format("unexpected answer from the worker: {}", answer->line.substr(0, 300)));
  }
  JobResult result = answered->result;
  if (result.index != job.index) {
    m_alive = false;
    m_child.kill(std::chrono::seconds(5));
    return JobResult::lost(job.index, job.case_id, RunOutcome::incomplete,
                           fmt::format("the worker answered case {} while case {} was awaited", result.case_id,
                                       job.case_id));
  }
  if (result.outcome == RunOutcome::fault) {
    // The worker exits after a sticky error; collect it so the next case gets a fresh one.
    m_alive = false;
    m_child.kill(std::chrono::seconds(5));
  }
  return result;
}

std::optional<protocol::RaceResult> WorkerClient::race(const protocol::RaceRequest& request,
                                                       std::chrono::seconds timeout, std::string& error) {
  wait_ready();
  if (!send(request)) {
    error = "the GPU worker was gone before the race control started";
    return std::nullopt;
  }
  bool timed_out = false;
  const std::optional<Received> answer = receive(Clock::now() + timeout, error, timed_out);
  if (!answer) {
    if (timed_out) {
      error = fmt::format("exceeded --case-timeout {} s: {}", timeout.count(), error);
    }
    return std::nullopt;
  }
  const auto* raced = std::get_if<protocol::RaceAnswer>(&answer->reply);
  if (raced == nullptr) {
    error = fmt::format("unexpected answer from the worker: {}", answer->line.substr(0, 300));
    return std::nullopt;
  }
  if (!raced->result) {
    error = raced->error;
    if (raced->fault) {
      // The worker exits after a sticky error; collect it so the next case gets a fresh one.
      m_alive = false;
      m_child.kill(std::chrono::seconds(5));
    }
    return std::nullopt;
  }
  return raced->result;
}

void WorkerClient::ask_to_quit() {
  if (m_asked_to_quit || !m_alive) {
    return;
  }
  m_asked_to_quit = true;
  if (!m_ready) {
    m_child.kill();  // never became ready: nothing to say goodbye to
    m_alive = false;
    return;
  }
  m_child.send_line(protocol::to_line(protocol::Quit{}));
}

void WorkerClient::quit() {
  ask_to_quit();
  if (m_alive) {
    if (!m_child.wait_for(std::chrono::seconds(10))) {
      m_child.kill();
    }
    m_alive = false;
  }
}

}  // namespace lp::sweep
