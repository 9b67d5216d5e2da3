#include "sweep/worker_client.hpp"

#include <fmt/format.h>

#include "util/base64.hpp"
#include "util/error.hpp"

namespace lp::sweep {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

WorkerClient::WorkerClient(const std::vector<std::string>& argv, std::chrono::seconds start_timeout) : m_child(argv) {
  std::string problem;
  bool timed_out = false;
  const std::optional<json> hello = receive(Clock::now() + start_timeout, problem, timed_out);
  if (!hello) {
    throw EnvironmentError(fmt::format("the GPU worker did not start: {}", problem));
  }
  if (hello->value("type", "") == "fatal") {
    m_alive = false;
    m_child.kill();
    throw EnvironmentError(fmt::format("running a sweep needs a Hopper (sm_90) GPU: {}; `loraprobe inspect` "
                                       "checks the SASS without one",
                                       hello->value("error", std::string("the GPU worker could not start"))));
  }
  if (hello->value("type", "") != "ready") {
    throw EnvironmentError(fmt::format("the GPU worker said {} instead of ready", hello->dump()));
  }
  m_gpu = hello->value("gpu", json());
}

std::optional<json> WorkerClient::receive(Clock::time_point deadline, std::string& problem, bool& timed_out) {
  while (true) {
    std::optional<std::string> line = m_child.read_line(deadline, timed_out);
    if (!line) {
      m_alive = false;
      if (timed_out) {
        const ChildExit e = m_child.kill();
        problem = fmt::format("no answer before the deadline; worker {} killed ({})", m_child.pid(), e.describe());
      } else {
        const ChildExit e = m_child.kill(std::chrono::seconds(5));
        problem = fmt::format("worker {} exited without answering ({})", m_child.pid(), e.describe());
      }
      return std::nullopt;
    }
    try {
      return json::parse(*line);
    } catch (const json::exception&) {
      // A stray line on stdout (a library printing) is not a message: skip it, but say so.
      fmt::print(stderr, "sweep: worker {}: {}\n", m_child.pid(), line->substr(0, 300));
    }
  }
}

std::vector<json> WorkerClient::load(const json& items, std::chrono::seconds timeout) {
  std::vector<json> results;
  auto fail_all = [&](const std::string& why) {
    results.clear();
    for (const json& item : items) {
      results.push_back({{"key", item.at("key")}, {"ok", false}, {"error", why}});
    }
    return results;
  };
  if (!m_alive || !m_child.send_line(json{{"type", "load_batch"}, {"items", items}}.dump())) {
    m_alive = false;
    return fail_all("the GPU worker is gone");
  }
  std::string problem;
  bool timed_out = false;
  const std::optional<json> answer = receive(Clock::now() + timeout, problem, timed_out);
  if (!answer) {
    return fail_all(problem);
  }
  if (answer->value("type", "") != "loaded_batch") {
    return fail_all(fmt::format("unexpected answer {}", answer->dump().substr(0, 300)));
  }
  for (const json& r : answer->at("results")) {
    if (r.value("ok", false)) {
      m_loaded.insert(r.at("key").get<std::string>());
    }
    results.push_back(r);
  }
  return results;
}

JobResult WorkerClient::run(const Job& job, std::chrono::seconds timeout) {
  JobResult lost;
  lost.index = job.index;
  lost.case_id = job.case_id;
  lost.metrics = nullptr;
  lost.timing = nullptr;
  if (!m_alive || !m_child.send_line(json{{"type", "run"}, {"job", to_json(job)}}.dump())) {
    m_alive = false;
    lost.status = "fault";
    lost.reason = "the GPU worker was gone before the case started";
    return lost;
  }
  std::string problem;
  bool timed_out = false;
  const std::optional<json> answer = receive(Clock::now() + timeout, problem, timed_out);
  if (!answer) {
    lost.status = timed_out ? "timeout" : "fault";
    lost.reason = timed_out ? fmt::format("exceeded --case-timeout {} s: {}", timeout.count(), problem) : problem;
    return lost;
  }
  if (answer->value("type", "") != "result") {
    lost.status = "incomplete";
    lost.reason = fmt::format("unexpected answer from the worker: {}", answer->dump().substr(0, 300));
    return lost;
  }
  JobResult result = result_from_json(answer->at("result"));
  if (result.status == "fault") {
    // The worker exits after a sticky error; collect it so the next case gets a fresh one.
    m_alive = false;
    m_child.kill(std::chrono::seconds(5));
  }
  return result;
}

std::optional<json> WorkerClient::race(std::string_view cubin, unsigned ctas, unsigned launches,
                                       std::chrono::seconds timeout, std::string& error) {
  const json request = {{"type", "race"}, {"cubin", base64_encode(cubin)}, {"ctas", ctas}, {"launches", launches}};
  if (!m_alive || !m_child.send_line(request.dump())) {
    m_alive = false;
    error = "the GPU worker was gone before the race control started";
    return std::nullopt;
  }
  bool timed_out = false;
  const std::optional<json> answer = receive(Clock::now() + timeout, error, timed_out);
  if (!answer) {
    if (timed_out) {
      error = fmt::format("exceeded --case-timeout {} s: {}", timeout.count(), error);
    }
    return std::nullopt;
  }
  if (answer->value("type", "") != "race_result") {
    error = fmt::format("unexpected answer from the worker: {}", answer->dump().substr(0, 300));
    return std::nullopt;
  }
  if (answer->contains("error")) {
    error = answer->at("error").get<std::string>();
    if (answer->value("fault", false)) {
      // The worker exits after a sticky error; collect it so the next case gets a fresh one.
      m_alive = false;
      m_child.kill(std::chrono::seconds(5));
    }
    return std::nullopt;
  }
  return answer->at("result");
}

void WorkerClient::quit() {
  if (m_alive) {
    m_child.send_line(R"({"type":"quit"})");
    if (!m_child.wait_for(std::chrono::seconds(10))) {
      m_child.kill();
    }
    m_alive = false;
  }
}

}  // namespace lp::sweep
