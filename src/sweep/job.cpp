#include "sweep/job.hpp"

#include <fmt/format.h>

#include "util/error.hpp"

namespace lp::sweep {

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

}  // namespace

json to_json(const ImageRef& image) {
  return {{"key", image.key}, {"triton", image.triton}, {"variant", image.variant_id}, {"compiler", image.compiler}};
}

ImageRef image_from_json(const json& j) {
  return {j.at("key").get<std::string>(), j.at("triton").get<std::string>(), j.at("variant").get<std::string>(),
          j.at("compiler").get<std::string>()};
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
            {"block_m", job.block_m},
            {"block_n", job.block_n},
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
    job.block_m = j.at("block_m").get<std::int64_t>();
    job.block_n = j.at("block_n").get<std::int64_t>();
    job.repeats = j.at("repeats").get<int>();
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
  return {{"index", r.index},   {"case_id", r.case_id},         {"status", r.status},
          {"reason", r.reason}, {"runs", r.runs},               {"failed_runs", r.failed_runs},
          {"metrics", r.metrics}, {"timing", r.timing}};
}

JobResult result_from_json(const json& j) {
  try {
    JobResult r;
    r.index = j.at("index").get<std::size_t>();
    r.case_id = j.at("case_id").get<std::string>();
    r.status = j.at("status").get<std::string>();
    r.reason = j.at("reason").get<std::string>();
    r.runs = j.at("runs").get<int>();
    r.failed_runs = j.at("failed_runs").get<int>();
    r.metrics = j.at("metrics");
    r.timing = j.at("timing");
    return r;
  } catch (const json::exception& e) {
    throw Error(fmt::format("worker result: malformed message: {}", e.what()));
  }
}

}  // namespace lp::sweep
