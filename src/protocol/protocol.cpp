#include "protocol/protocol.hpp"

#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>
#include <variant>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "families/family.hpp"
#include "model/metrics_json.hpp"
#include "util/base64.hpp"
#include "util/error.hpp"
#include "util/json_bounded.hpp"
#include "util/json_in.hpp"
#include "util/text.hpp"

namespace lp::protocol {

using nlohmann::json;

namespace {

/// How deep a message may nest: the deepest one (a result's metrics) is 4 levels; a
/// line nested deeper is not a message, and is not built.
constexpr std::size_t k_max_message_depth = 16;

/// Runs `read` on `j` viewed as the message `what`: every field's type and range is
/// checked (util/json_in.hpp). A malformed message is this binary's bug or a line that
/// only looks like a message (a library's or a kernel's printf on the worker's stdout),
/// never the user's input: lp::Error naming the message and the field, not exit 2.
template <class F>
auto parsed(const char* what, const json& j, F&& read, std::string pointer = "") {
  const std::string name = what;
  try {
    return read(JsonIn(j, name, std::move(pointer)));
  } catch (const InputError& e) {
    throw Error(e.pointer().empty() ? fmt::format("malformed {}: {}", what, e.message())
                                    : fmt::format("malformed {}: {}: {}", what, e.pointer(), e.message()));
  }
}

/// A message's "type", or "" when it has none (or is no object).
std::string message_type(const json& message) {
  const auto it = message.is_object() ? message.find("type") : message.end();
  return it != message.end() && it->is_string() ? it->get<std::string>() : "";
}

DType dtype_from(const JsonIn& j) {
  const std::string name = j.string();
  const std::optional<DType> d = parse_dtype(name);
  if (!d) {
    j.fail(fmt::format("unknown dtype \"{}\"", name));
  }
  return *d;
}

/// A finite number that fits a float.
float float_from(const JsonIn& j) {
  const double v = j.number();
  if (std::fabs(v) > static_cast<double>(std::numeric_limits<float>::max())) {
    j.fail(fmt::format("{} is out of a float's range", v));
  }
  return static_cast<float>(v);
}

ImageRef image_from(const JsonIn& j) {
  const std::string name = j.at("compiler").string();
  const std::optional<compile::Compiler> compiler = compile::Compiler::parse(name);
  if (!compiler) {
    j.at("compiler").fail(fmt::format("unknown compiler \"{}\"", name));
  }
  ImageRef image{j.at("triton").string(), j.at("variant").string(), *compiler, 0};
  if (const std::optional<JsonIn> amplify = j.find("amplify")) {
    image.amplify = amplify->whole<int>(0, k_max_amplify);
  }
  // The key is the image's name, made from the fields above; one that names another
  // image is a parent and a worker that disagree.
  if (const std::string key = j.at("key").string(); key != image.key()) {
    j.at("key").fail(fmt::format("\"{}\" is not the key of the image it describes (\"{}\")", key, image.key()));
  }
  return image;
}

std::string base64_from(const JsonIn& j) {
  try {
    return base64_decode(j.string());
  } catch (const Error& e) {
    j.fail(e.what());
  }
}

LoadItem load_item_from(const JsonIn& j) {
  LoadItem item{image_from(j), std::nullopt, std::nullopt};
  if (const std::optional<JsonIn> cubin = j.find("cubin")) {
    item.cubin = base64_from(*cubin);
  }
  item.ptx = j.optional_string("ptx");
  return item;
}

LoadResult load_result_from(const JsonIn& j) {
  LoadResult r;
  r.key = j.at("key").string();
  r.ok = j.at("ok").boolean();
  r.error = j.optional_string("error").value_or("");
  if (const std::optional<JsonIn> cubin = j.find("cubin")) {
    r.jit_cubin = base64_from(*cubin);
    r.jit_log = j.optional_string("jit_log").value_or("");
    r.ms = j.optional_number("ms").value_or(0.0);
  }
  return r;
}

Job job_from(const JsonIn& j) {
  Job job;
  job.index = j.at("index").count();
  job.case_id = j.at("case_id").string();
  Problem& p = job.problem;
  const std::string op = j.at("op").string();
  const std::optional<Op> parsed_op = parse_op(op);
  if (!parsed_op) {
    j.at("op").fail(fmt::format("unknown op \"{}\"", op));
  }
  p.op = *parsed_op;
  p.num_tokens = j.at("num_tokens").whole<std::int64_t>(0);
  p.rank = j.at("rank").whole<std::int64_t>(0);
  for (const JsonIn& width : j.at("slice_hidden").items()) {
    p.slice_hidden.push_back(width.whole<std::int64_t>(0));
  }
  p.hidden_in = j.at("hidden_in").whole<std::int64_t>(0);
  p.num_loras = j.at("num_loras").whole<std::int32_t>(0);
  p.input_dtype = dtype_from(j.at("input_dtype"));
  p.weight_dtype = dtype_from(j.at("weight_dtype"));
  p.add_inputs = j.at("add_inputs").boolean();
  p.scale = float_from(j.at("scale"));
  p.seed = j.at("seed").whole<std::uint64_t>();
  p.split_k = j.at("split_k").whole<std::int32_t>(0);
  p.amplify = j.at("amplify").whole<std::int32_t>(0);
  if (const std::optional<JsonIn> group = j.find("scale_group")) {
    p.scale_group = group->whole<std::int32_t>(0);  // the FP8 families' (absent: 0, per tensor)
  }
  const JsonIn moe = j.at("moe");
  p.moe.num_experts = moe.at("num_experts").whole<std::int32_t>(0);
  p.moe.top_k = moe.at("top_k").whole<std::int32_t>(0);
  p.moe.mul_routed_weight = moe.at("mul_routed_weight").boolean();
  p.moe.block_m = moe.at("block_m").whole<std::int32_t>(0);
  job.block_m = j.at("block_m").whole<std::int64_t>(0);
  job.block_n = j.at("block_n").whole<std::int64_t>(0);
  job.repeats = j.at("repeats").whole<int>(0);
  job.pdl = j.at("pdl").boolean();
  job.atol = j.optional_number("atol");
  job.rtol = j.optional_number("rtol");
  if (const std::optional<JsonIn> expand = j.find("expand")) {
    job.expand = image_from(*expand);
  }
  if (const std::optional<JsonIn> shrink = j.find("shrink")) {
    job.shrink = image_from(*shrink);
  }
  return job;
}

JobResult result_from(const JsonIn& j) {
  JobResult r;
  r.index = j.at("index").count();
  r.case_id = j.at("case_id").string();
  const std::string outcome = j.at("outcome").string();
  const std::optional<RunOutcome> parsed_outcome = parse_run_outcome(outcome);
  if (!parsed_outcome) {
    j.at("outcome").fail(fmt::format("unknown outcome \"{}\"", outcome));
  }
  r.outcome = *parsed_outcome;
  r.reason = j.at("reason").string();
  r.runs = j.at("runs").whole<int>(0);
  r.failed_runs = j.at("failed_runs").whole<int>(0);
  if (const std::optional<JsonIn> metrics = j.find("metrics")) {
    r.metrics = metrics_from_json(*metrics);
  }
  if (const std::optional<JsonIn> timing = j.find("timing")) {
    r.timing = timing_from_json(*timing);
  }
  r.worker_ms = j.optional_number("worker_ms").value_or(0.0);
  return r;
}

RaceRequest race_request_from(const JsonIn& j) {
  return RaceRequest{base64_from(j.at("cubin")), j.at("ctas").whole<unsigned>(), j.at("launches").whole<unsigned>()};
}

RaceResult race_result_from(const JsonIn& j) {
  RaceResult r;
  r.ctas = j.at("ctas").whole<unsigned>();
  r.launches = j.at("launches").whole<unsigned>();
  r.tiles = j.at("tiles").whole<std::uint64_t>();
  r.late_tiles = j.at("late_tiles").whole<std::uint64_t>();
  r.late_elements = j.at("late_elements").whole<std::uint64_t>();
  r.launches_with_late = j.at("launches_with_late").whole<std::uint64_t>();
  r.unwritten = j.at("unwritten").whole<std::uint64_t>();
  for (const auto& [text, count] : j.at("values").members()) {  // members(): an object, checked
    const std::optional<float> value = parse_number<float>(text);  // fmt's "{}" of a float reads back exactly
    if (!value) {
      count.fail(fmt::format("value \"{}\" is not a number", text));
    }
    r.values[*value] = count.whole<std::uint64_t>();
  }
  return r;
}

GpuRecord gpu_record_from(const JsonIn& in) {
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

std::string ImageRef::key() const {
  std::string key = triton + "/" + variant_id + "|" + compiler.to_string();
  if (amplify > 0) {
    key += fmt::format("|amplify={}", amplify);
  }
  return key;
}

json to_json(const ImageRef& image) {
  json j = {{"key", image.key()}, {"triton", image.triton}, {"variant", image.variant_id},
            {"compiler", image.compiler.to_string()}};
  if (image.amplify > 0) {
    j["amplify"] = image.amplify;
  }
  return j;
}

ImageRef image_from_json(const json& j) {
  return parsed("image", j, image_from);
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
  return parsed("load item", j, load_item_from);
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
  return parsed("load result", j, load_result_from);
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
            {"amplify", p.amplify},
            {"scale_group", p.scale_group},
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

Job job_from_json(const json& j) { return parsed("job", j, job_from); }

json to_json(const JobResult& r) {
  return {{"index", r.index},   {"case_id", r.case_id},         {"outcome", to_string(r.outcome)},
          {"reason", r.reason}, {"runs", r.runs},               {"failed_runs", r.failed_runs},
          {"metrics", r.metrics ? json(*r.metrics) : json()},
          {"timing", r.timing ? json(*r.timing) : json()},
          {"worker_ms", r.worker_ms}};
}

JobResult result_from_json(const json& j) { return parsed("worker result", j, result_from); }

json to_json(const RaceRequest& request) {
  return {{"cubin", base64_encode(request.cubin)}, {"ctas", request.ctas}, {"launches", request.launches}};
}

RaceRequest race_request_from_json(const json& j) { return parsed("race request", j, race_request_from); }

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
  return parsed("race-control result", j, race_result_from);
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
  return parsed("worker ready message", j, gpu_record_from, "/gpu");  // where a ready message holds it
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
  return message.dump(-1, ' ', false, json::error_handler_t::replace);  // as the replies
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
  // A driver's JIT log or an error may quote bytes that are not UTF-8: replaced, never
  // thrown (the worker's writer thread has nobody to throw to).
  return message.dump(-1, ' ', false, json::error_handler_t::replace);
}

Request parse_request(std::string_view line) {
  json request;
  try {
    request = parse_json_bounded(line, "worker", k_max_message_depth);
  } catch (const InputError& e) {
    return BadRequest{fmt::format("worker: unreadable request: {}", e.message())};
  }
  const std::string type = message_type(request);
  if (type == "run") {
    return parsed("run request", request, [](const JsonIn& r) -> Request { return RunJob{job_from(r.at("job"))}; });
  }
  if (type == "load_batch") {
    return parsed("load_batch request", request, [](const JsonIn& r) -> Request {
      LoadBatch batch;
      for (const JsonIn& item : r.at("items").items()) {
        batch.items.push_back(load_item_from(item));
      }
      return batch;
    });
  }
  if (type == "race") {
    return parsed("race request", request, [](const JsonIn& r) -> Request { return race_request_from(r); });
  }
  if (type == "quit") {
    return Quit{};
  }
  return BadRequest{fmt::format("worker: unknown request type \"{}\"", type)};
}

std::optional<Reply> parse_reply(std::string_view line) {
  std::optional<json> reply = try_parse_json_bounded(line, k_max_message_depth);
  if (!reply || !reply->is_object()) {
    return std::nullopt;  // not a message: a line some library printed
  }
  const std::string name = message_type(*reply);
  return parsed("worker reply", *reply, [&](const JsonIn& r) -> Reply {
    if (name == "ready") {
      const std::optional<JsonIn> pid = r.find("pid");
      return Ready{pid ? pid->whole<int>(0) : 0, gpu_record_from(r.at("gpu"))};
    }
    if (name == "fatal") {
      const std::optional<JsonIn> code = r.find("exit_code");
      return StartFailure{r.optional_string("error").value_or(""), code ? code->whole<int>(0, 255) : 3};
    }
    if (name == "loaded_batch") {
      LoadedBatch batch;
      for (const JsonIn& result : r.at("results").items()) {
        batch.results.push_back(load_result_from(result));
      }
      return batch;
    }
    if (name == "result") {
      return JobAnswer{result_from(r.at("result"))};
    }
    if (name == "race_result") {
      if (const std::optional<JsonIn> error = r.find("error")) {
        const std::optional<JsonIn> fault = r.find("fault");
        return RaceAnswer{std::nullopt, error->string(), fault && fault->boolean()};
      }
      return RaceAnswer{race_result_from(r.at("result")), {}, false};
    }
    if (name == "error") {
      return WorkerError{r.optional_string("error").value_or("")};
    }
    return UnknownReply{std::string(line)};
  });
}

JsonText to_json_text(const RaceResult& result) { return JsonText::of(to_json(result)); }

JsonText to_json_text(const GpuRecord& gpu) { return JsonText::of(to_json(gpu)); }

}  // namespace lp::protocol
