#include "protocol/protocol.hpp"

#include <optional>
#include <type_traits>
#include <variant>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/metrics_json.hpp"
#include "util/base64.hpp"
#include "util/error.hpp"
#include "util/json_in.hpp"
#include "util/text.hpp"

namespace lp::protocol {

using nlohmann::json;

namespace {

DType dtype_from(const json& j, const char* key) {
  const std::optional<DType> d = parse_dtype(j.at(key).get<std::string>());
  if (!d) {
    throw Error(fmt::format("job: unknown dtype {}", j.at(key).dump()));
  }
  return *d;
}

template <class T>
std::optional<T> optional_from(const json& j, const char* key) {
  const auto it = j.find(key);
  return it == j.end() || it->is_null() ? std::nullopt : std::optional<T>(it->get<T>());
}

/// Runs `parse`, turning a JSON type or key error into lp::Error naming the message.
template <class F>
auto parsed(const char* what, F&& parse) {
  try {
    return parse();
  } catch (const json::exception& e) {
    throw Error(fmt::format("{}: malformed message: {}", what, e.what()));
  }
}

compile::Compiler compiler_from(const json& j) {
  const std::optional<compile::Compiler> c = compile::Compiler::parse(j.get<std::string>());
  if (!c) {
    throw Error(fmt::format("image: unknown compiler {}", j.dump()));
  }
  return *c;
}

}  // namespace

std::string_view to_string(RunOutcome outcome) {
  switch (outcome) {
    case RunOutcome::ran:
      return "ran";
    case RunOutcome::refused:
      return "refused";
    case RunOutcome::incomplete:
      return "incomplete";
    case RunOutcome::fault:
      return "fault";
    case RunOutcome::timeout:
      return "timeout";
  }
  return "?";
}

std::optional<RunOutcome> parse_run_outcome(std::string_view text) {
  for (const RunOutcome o : {RunOutcome::ran, RunOutcome::refused, RunOutcome::incomplete, RunOutcome::fault,
                             RunOutcome::timeout}) {
    if (text == to_string(o)) {
      return o;
    }
  }
  return std::nullopt;
}

JobResult JobResult::lost(std::size_t index, std::string case_id, RunOutcome outcome, std::string reason) {
  JobResult r;
  r.index = index;
  r.case_id = std::move(case_id);
  r.outcome = outcome;
  r.reason = std::move(reason);
  return r;
}

json to_json(const ImageRef& image) {
  return {{"key", image.key}, {"triton", image.triton}, {"variant", image.variant_id},
          {"compiler", image.compiler.to_string()}};
}

ImageRef image_from_json(const json& j) {
  return parsed("image", [&] {
    return ImageRef{j.at("key").get<std::string>(), j.at("triton").get<std::string>(),
                    j.at("variant").get<std::string>(), compiler_from(j.at("compiler"))};
  });
}

json to_json(const LoadItem& item) {
  json j = to_json(item.image);
  if (item.cubin) {
    j["cubin"] = base64_encode(*item.cubin);
  }
  if (item.ptx) {
    j["ptx"] = *item.ptx;
  }
  return j;
}

LoadItem load_item_from_json(const json& j) {
  return parsed("load item", [&] {
    LoadItem item{image_from_json(j), std::nullopt, std::nullopt};
    if (j.contains("cubin")) {
      item.cubin = base64_decode(j.at("cubin").get<std::string>());
    }
    if (j.contains("ptx")) {
      item.ptx = j.at("ptx").get<std::string>();
    }
    return item;
  });
}

json to_json(const LoadResult& r) {
  json j = {{"key", r.key}, {"ok", r.ok}};
  if (!r.error.empty()) {
    j["error"] = r.error;
  }
  if (r.jit_cubin) {
    j["cubin"] = base64_encode(*r.jit_cubin);
    j["jit_log"] = r.jit_log;
    j["ms"] = r.ms;
  }
  return j;
}

LoadResult load_result_from_json(const json& j) {
  return parsed("load result", [&] {
    LoadResult r;
    r.key = j.at("key").get<std::string>();
    r.ok = j.at("ok").get<bool>();
    r.error = j.value("error", std::string());
    if (j.contains("cubin")) {
      r.jit_cubin = base64_decode(j.at("cubin").get<std::string>());
      r.jit_log = j.value("jit_log", std::string());
      r.ms = j.value("ms", 0.0);
    }
    return r;
  });
}

json to_json(const Job& job) {
  const Problem& p = job.problem;
  json j = {{"index", job.index},
            {"case_id", job.case_id},
            {"op", op_name(p.op)},
            {"num_tokens", p.num_tokens},
            {"rank", p.rank},
            {"slice_hidden", p.slice_hidden},
            {"hidden_in", p.hidden_in},
            {"num_loras", p.num_loras},
            {"input_dtype", dtype_name(p.input_dtype)},
            {"weight_dtype", dtype_name(p.weight_dtype)},
            {"add_inputs", p.add_inputs},
            {"scale", p.scale},
            {"seed", p.seed},
            {"split_k", p.split_k},
            {"amplify_pairs", p.amplify_pairs},
            {"moe", {{"num_experts", p.moe.num_experts},
                     {"top_k", p.moe.top_k},
                     {"mul_routed_weight", p.moe.mul_routed_weight},
                     {"block_m", p.moe.block_m}}},
            {"block_m", job.block_m},
            {"block_n", job.block_n},
            {"pdl", job.pdl},
            {"repeats", job.repeats},
            {"atol", job.atol ? json(*job.atol) : json()},
            {"rtol", job.rtol ? json(*job.rtol) : json()},
            {"expand", job.expand ? to_json(*job.expand) : json()},
            {"shrink", job.shrink ? to_json(*job.shrink) : json()}};
  return j;
}

Job job_from_json(const json& j) {
  try {
    Job job;
    job.index = j.at("index").get<std::size_t>();
    job.case_id = j.at("case_id").get<std::string>();
    Problem& p = job.problem;
    const std::optional<Op> op = parse_op(j.at("op").get<std::string>());
    if (!op) {
      throw Error(fmt::format("job: unknown op {}", j.at("op").dump()));
    }
    p.op = *op;
    p.num_tokens = j.at("num_tokens").get<std::int64_t>();
    p.rank = j.at("rank").get<std::int64_t>();
    p.slice_hidden = j.at("slice_hidden").get<std::vector<std::int64_t>>();
    p.hidden_in = j.at("hidden_in").get<std::int64_t>();
    p.num_loras = j.at("num_loras").get<std::int32_t>();
    p.input_dtype = dtype_from(j, "input_dtype");
    p.weight_dtype = dtype_from(j, "weight_dtype");
    p.add_inputs = j.at("add_inputs").get<bool>();
    p.scale = j.at("scale").get<float>();
    p.seed = j.at("seed").get<std::uint64_t>();
    p.split_k = j.at("split_k").get<std::int32_t>();
    p.amplify_pairs = j.at("amplify_pairs").get<std::int32_t>();
    const json& moe = j.at("moe");
    p.moe.num_experts = moe.at("num_experts").get<std::int32_t>();
    p.moe.top_k = moe.at("top_k").get<std::int32_t>();
    p.moe.mul_routed_weight = moe.at("mul_routed_weight").get<bool>();
    p.moe.block_m = moe.at("block_m").get<std::int32_t>();
    job.block_m = j.at("block_m").get<std::int64_t>();
    job.block_n = j.at("block_n").get<std::int64_t>();
    job.repeats = j.at("repeats").get<int>();
    job.pdl = j.at("pdl").get<bool>();
    job.atol = optional_from<double>(j, "atol");
    job.rtol = optional_from<double>(j, "rtol");
    if (!j.at("expand").is_null()) {
      job.expand = image_from_json(j.at("expand"));
    }
    if (!j.at("shrink").is_null()) {
      job.shrink = image_from_json(j.at("shrink"));
    }
    return job;
  } catch (const json::exception& e) {
    throw Error(fmt::format("job: malformed message: {}", e.what()));
  }
}

json to_json(const JobResult& r) {
  return {{"index", r.index},   {"case_id", r.case_id},         {"outcome", to_string(r.outcome)},
          {"reason", r.reason}, {"runs", r.runs},               {"failed_runs", r.failed_runs},
          {"metrics", r.metrics ? json(*r.metrics) : json()},
          {"timing", r.timing ? json(*r.timing) : json()},
          {"worker_ms", r.worker_ms}};
}

JobResult result_from_json(const json& j) {
  try {
    JobResult r;
    r.index = j.at("index").get<std::size_t>();
    r.case_id = j.at("case_id").get<std::string>();
    const std::optional<RunOutcome> outcome = parse_run_outcome(j.at("outcome").get<std::string>());
    if (!outcome) {
      throw Error(fmt::format("worker result: unknown outcome {}", j.at("outcome").dump()));
    }
    r.outcome = *outcome;
    r.reason = j.at("reason").get<std::string>();
    r.runs = j.at("runs").get<int>();
    r.failed_runs = j.at("failed_runs").get<int>();
    static const std::string k_message = "worker result";
    if (!j.at("metrics").is_null()) {
      r.metrics = metrics_from_json(JsonIn(j.at("metrics"), k_message, "/metrics"));
    }
    if (!j.at("timing").is_null()) {
      r.timing = timing_from_json(JsonIn(j.at("timing"), k_message, "/timing"));
    }
    r.worker_ms = j.value("worker_ms", 0.0);
    return r;
  } catch (const json::exception& e) {
    throw Error(fmt::format("worker result: malformed message: {}", e.what()));
  } catch (const InputError& e) {
    throw Error(fmt::format("malformed message: {}", e.what()));  // ours, not the user's: not exit 2
  }
}

json to_json(const RaceRequest& request) {
  return {{"cubin", base64_encode(request.cubin)}, {"ctas", request.ctas}, {"launches", request.launches}};
}

RaceRequest race_request_from_json(const json& j) {
  return parsed("race request", [&] {
    return RaceRequest{base64_decode(j.at("cubin").get<std::string>()), j.at("ctas").get<unsigned>(),
                       j.at("launches").get<unsigned>()};
  });
}

json to_json(const RaceResult& r) {
  json seen = json::object();
  for (const auto& [v, n] : r.values) {
    seen[fmt::format("{}", v)] = n;
  }
  return {{"ctas", r.ctas},
          {"launches", r.launches},
          {"tiles", r.tiles},
          {"late_tiles", r.late_tiles},
          {"late_elements", r.late_elements},
          {"launches_with_late", r.launches_with_late},
          {"unwritten", r.unwritten},
          {"values", seen}};
}

RaceResult race_result_from_json(const json& j) {
  try {
    RaceResult r;
    r.ctas = j.at("ctas").get<unsigned>();
    r.launches = j.at("launches").get<unsigned>();
    r.tiles = j.at("tiles").get<std::uint64_t>();
    r.late_tiles = j.at("late_tiles").get<std::uint64_t>();
    r.late_elements = j.at("late_elements").get<std::uint64_t>();
    r.launches_with_late = j.at("launches_with_late").get<std::uint64_t>();
    r.unwritten = j.at("unwritten").get<std::uint64_t>();
    for (const auto& [v, n] : j.at("values").items()) {
      const std::optional<float> value = parse_number<float>(v);  // fmt's "{}" of a float reads back exactly
      if (!value) {
        throw Error(fmt::format("malformed race-control result: value \"{}\" is not a number", v));
      }
      r.values[*value] = n.get<std::uint64_t>();
    }
    return r;
  } catch (const nlohmann::json::exception& e) {  // a missing key, a wrong type, a number out of range
    throw Error(fmt::format("malformed race-control result: {}", e.what()));
  }
}

json to_json(const GpuRecord& g) {
  return {{"ordinal", g.ordinal},
          {"device_count", g.device_count},
          {"name", g.name},
          {"uuid", g.uuid},
          {"pci_bus_id", g.pci_bus_id},
          {"compute_capability", g.compute_capability},
          {"sm_count", g.sm_count},
          {"sm_clock_mhz", g.sm_clock_mhz},
          {"memory_clock_mhz", g.memory_clock_mhz},
          {"memory_bus_width_bits", g.memory_bus_width_bits},
          {"peak_bandwidth_gb_s", g.peak_bandwidth_gb_s},
          {"total_memory_bytes", g.total_memory_bytes},
          {"free_memory_bytes", g.free_memory_bytes},
          {"ecc_enabled", g.ecc_enabled},
          {"driver_version", g.driver_version},
          {"driver_cuda_version", g.driver_cuda_version},
          {"runtime_version", g.runtime_version},
          {"cublas_version", g.cublas_version},
          {"driver_library", g.driver_library},
          {"jit_cache_disabled", g.jit_cache_disabled},
          {"cuda_cache_disable_env", g.cuda_cache_disable_env},
          {"module_loading_env", g.module_loading_env},
          {"module_loading", g.module_loading}};
}

GpuRecord gpu_record_from_json(const json& j) {
  static const std::string k_message = "worker ready message";
  try {
    const JsonIn in(j, k_message, "/gpu");
    GpuRecord g;
    g.ordinal = in.at("ordinal").whole<int>(0);
    g.device_count = in.at("device_count").whole<int>(1);
    g.name = in.at("name").string();
    g.uuid = in.at("uuid").string();
    g.pci_bus_id = in.at("pci_bus_id").string();
    g.compute_capability = in.at("compute_capability").string();
    g.sm_count = in.at("sm_count").whole<int>(0);
    g.sm_clock_mhz = in.at("sm_clock_mhz").whole<int>(0);
    g.memory_clock_mhz = in.at("memory_clock_mhz").whole<int>(0);
    g.memory_bus_width_bits = in.at("memory_bus_width_bits").whole<int>(0);
    g.peak_bandwidth_gb_s = in.at("peak_bandwidth_gb_s").number();
    g.total_memory_bytes = in.at("total_memory_bytes").whole<std::uint64_t>(0);
    g.free_memory_bytes = in.at("free_memory_bytes").whole<std::uint64_t>(0);
    g.ecc_enabled = in.at("ecc_enabled").boolean();
    g.driver_version = in.at("driver_version").string();
    g.driver_cuda_version = in.at("driver_cuda_version").string();
    g.runtime_version = in.at("runtime_version").string();
    g.cublas_version = in.at("cublas_version").string();
    g.driver_library = in.at("driver_library").string();
    g.jit_cache_disabled = in.at("jit_cache_disabled").boolean();
    g.cuda_cache_disable_env = in.at("cuda_cache_disable_env").string();
    g.module_loading_env = in.at("module_loading_env").string();
    g.module_loading = in.at("module_loading").string();
    return g;
  } catch (const InputError& e) {  // the worker is this binary: a malformed message is a bug, not bad input
    throw Error(fmt::format("malformed {}: {}: {}", k_message, e.pointer(), e.message()));
  }
}

namespace {

template <class T>
json list_json(const std::vector<T>& values) {
  json out = json::array();
  for (const T& v : values) {
    out.push_back(to_json(v));
  }
  return out;
}

}  // namespace

std::string to_line(const Request& request) {
  const json message = std::visit(
      [](const auto& r) -> json {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, LoadBatch>) {
          return {{"type", "load_batch"}, {"items", list_json(r.items)}};
        } else if constexpr (std::is_same_v<T, RunJob>) {
          return {{"type", "run"}, {"job", to_json(r.job)}};
        } else if constexpr (std::is_same_v<T, RaceRequest>) {
          json j = to_json(r);
          j["type"] = "race";
          return j;
        } else if constexpr (std::is_same_v<T, Quit>) {
          return {{"type", "quit"}};
        } else {
          throw Error("a bad request is answered, never sent");
        }
      },
      request);
  return message.dump();
}

std::string to_line(const Reply& reply) {
  const json message = std::visit(
      [](const auto& r) -> json {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, Ready>) {
          return {{"type", "ready"}, {"pid", r.pid}, {"gpu", to_json(r.gpu)}};
        } else if constexpr (std::is_same_v<T, StartFailure>) {
          return {{"type", "fatal"}, {"error", r.error}, {"exit_code", r.exit_code}};
        } else if constexpr (std::is_same_v<T, LoadedBatch>) {
          return {{"type", "loaded_batch"}, {"results", list_json(r.results)}};
        } else if constexpr (std::is_same_v<T, JobAnswer>) {
          return {{"type", "result"}, {"result", to_json(r.result)}};
        } else if constexpr (std::is_same_v<T, RaceAnswer>) {
          if (r.result) {
            return {{"type", "race_result"}, {"result", to_json(*r.result)}};
          }
          json j = {{"type", "race_result"}, {"error", r.error}};
          if (r.fault) {
            j["fault"] = true;
          }
          return j;
        } else if constexpr (std::is_same_v<T, WorkerError>) {
          return {{"type", "error"}, {"error", r.error}};
        } else {
          throw Error("an unknown reply is read, never sent");
        }
      },
      reply);
  return message.dump();
}

Request parse_request(std::string_view line) {
  json request;
  try {
    request = json::parse(line);
  } catch (const json::exception& e) {
    return BadRequest{fmt::format("worker: unreadable request: {}", e.what())};
  }
  const std::string type = request.is_object() ? request.value("type", "") : "";
  if (type == "run") {
    return parsed("run request", [&] { return RunJob{job_from_json(request.at("job"))}; });
  }
  if (type == "load_batch") {
    return parsed("load_batch request", [&] {
      LoadBatch batch;
      for (const json& j : request.at("items")) {
        batch.items.push_back(load_item_from_json(j));
      }
      return batch;
    });
  }
  if (type == "race") {
    return race_request_from_json(request);
  }
  if (type == "quit") {
    return Quit{};
  }
  return BadRequest{fmt::format("worker: unknown request type \"{}\"", type)};
}

std::optional<Reply> parse_reply(std::string_view line) {
  json reply;
  try {
    reply = json::parse(line);
  } catch (const json::exception&) {
    return std::nullopt;
  }
  if (!reply.is_object()) {
    return std::nullopt;
  }
  const json* type = reply.contains("type") ? &reply["type"] : nullptr;
  const std::string name = type != nullptr && type->is_string() ? type->get<std::string>() : "";
  return parsed("worker reply", [&]() -> Reply {
    if (name == "ready") {
      return Ready{reply.value("pid", 0), gpu_record_from_json(reply.contains("gpu") ? reply["gpu"] : json())};
    }
    if (name == "fatal") {
      return StartFailure{reply.value("error", std::string()), reply.value("exit_code", 3)};
    }
    if (name == "loaded_batch") {
      LoadedBatch batch;
      for (const json& j : reply.at("results")) {
        batch.results.push_back(load_result_from_json(j));
      }
      return batch;
    }
    if (name == "result") {
      return JobAnswer{result_from_json(reply.at("result"))};
    }
    if (name == "race_result") {
      if (reply.contains("error")) {
        return RaceAnswer{std::nullopt, reply.at("error").get<std::string>(), reply.value("fault", false)};
      }
      return RaceAnswer{race_result_from_json(reply.at("result")), {}, false};
    }
    if (name == "error") {
      return WorkerError{reply.value("error", std::string())};
    }
    return UnknownReply{std::string(line)};
  });
}

JsonText to_json_text(const RaceResult& result) { return JsonText::of(to_json(result)); }

JsonText to_json_text(const GpuRecord& gpu) { return JsonText::of(to_json(gpu)); }

}  // namespace lp::protocol
