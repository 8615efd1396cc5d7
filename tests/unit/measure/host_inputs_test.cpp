// SPDX-License-Identifier: Apache-2.0
// The host's copy of a configuration's inputs when the declared fills are made on the device:
// nothing of them on the host until a verification needs it, then the same bytes as
// make_inputs, and a device digest that disagrees stops the configuration naming the tensor.
#include <gtest/gtest.h>

#include "portbench/error.hpp"
#include "portbench/measure/host_inputs.hpp"
#include "portbench/reference/config.hpp"
#include "portbench/verify/output_digest.hpp"

namespace pm = portbench::measure;
namespace pr = portbench::reference;
namespace pv = portbench::verify;

namespace {

// What a correct device would report: the digests of make_inputs' bytes of the declared fills,
// in tensor order.
std::string digest_of_declared(const pr::operator_spec& op, const pr::config& c, std::uint64_t seed) {
  const auto whole = pr::make_inputs(op, c, seed);
  std::string out;
  for (const auto& t : whole) {
    for (const auto& f : op.uniform_fills(c)) {
      if (f.tensor == t.spec.name) out += (out.empty() ? "" : ";") + pv::host_digest(t.spec.name, t.bytes);
    }
  }
  return out;
}

pr::config config_of(const std::string& op, const std::map<std::string, pr::param_value>& params) {
  pr::config c;
  c.op = op;
  c.params = params;
  return c;
}

}  // namespace

TEST(HostInputs, DeclaredFillsReachTheHostOnlyWhenCompletedAndThenEqualMakeInputs) {
  const auto c = config_of("layer_norm_legacy", {{"variant", std::string("layer_norm_legacy")}, {"m", std::int64_t{64}},
                                                 {"n", std::int64_t{96}}, {"dtype", std::string("float16")}, {"eps", 1e-5}});
  const auto& op = pr::find_operator(c.op);
  pm::host_inputs in(op, c, 5, true);
  ASSERT_EQ(in.device_fills().size(), 3u);
  for (const auto& t : in.tensors()) {
    if (t.spec.role != pr::tensor_role::out) {
      EXPECT_TRUE(t.bytes.empty()) << t.spec.name;
    }
  }
  in.complete(digest_of_declared(op, c, 5));
  const auto whole = pr::make_inputs(op, c, 5);
  for (std::size_t i = 0; i < whole.size(); ++i) {
    if (whole[i].spec.role != pr::tensor_role::out) {
      EXPECT_EQ(in.tensors()[i].bytes, whole[i].bytes) << whole[i].spec.name;
    }
  }
  in.complete("not looked at again");   // once complete, a second call changes nothing
}

TEST(HostInputs, ADeviceDigestThatDisagreesNamesTheTensor) {
  const auto c = config_of("layer_norm_legacy", {{"variant", std::string("layer_norm_legacy")}, {"m", std::int64_t{64}},
                                                 {"n", std::int64_t{96}}, {"dtype", std::string("float16")}, {"eps", 1e-5}});
  const auto& op = pr::find_operator(c.op);
  // The device generated "w" from another seed: the digests of x and b agree, w's does not.
  std::string wrong;
  const auto right = pr::make_inputs(op, c, 5), other = pr::make_inputs(op, c, 6);
  for (std::size_t i = 0; i < right.size(); ++i) {
    if (right[i].spec.role == pr::tensor_role::out) continue;
    const auto& t = right[i].spec.name == "w" ? other[i] : right[i];
    wrong += (wrong.empty() ? "" : ";") + pv::host_digest(t.spec.name, t.bytes);
  }
  pm::host_inputs in(op, c, 5, true);
  try {
    in.complete(wrong);
    FAIL() << "a wrong device digest was accepted";
  } catch (const portbench::error& e) {
    EXPECT_NE(std::string(e.what()).find("input 'w' (fp16, seed 5)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--host-inputs"), std::string::npos) << e.what();
  }
}

TEST(HostInputs, AnInPlaceOperatorKeepsItsPristineInputsApartFromTheOutputs) {
  // rope writes q and k in place; its cos and sin tables are not declared fills (host-made).
  const auto c = config_of("rope", {{"bsz", std::int64_t{1}}, {"seq_len", std::int64_t{16}}, {"num_q_heads", std::int64_t{2}},
                                    {"num_kv_heads", std::int64_t{2}}, {"head_dim", std::int64_t{32}},
                                    {"dtype", std::string("float32")}});
  const auto& op = pr::find_operator(c.op);
  pm::host_inputs in(op, c, 9, true);
  const auto& cos_host = pr::find_tensor(in.pristine(), "cos");
  EXPECT_FALSE(cos_host.bytes.empty()) << "an undeclared input is made on the host at once";
  EXPECT_TRUE(pr::find_tensor(in.pristine(), "q").bytes.empty());
  in.complete(digest_of_declared(op, c, 9));
  const auto whole = pr::make_inputs(op, c, 9);
  EXPECT_EQ(pr::find_tensor(in.pristine(), "q").bytes, pr::find_tensor(whole, "q").bytes);
  EXPECT_NE(&in.pristine(), &in.tensors());
}

TEST(HostInputs, HostModeMakesEverythingAtOnce) {
  const auto c = config_of("softmax", {{"m", std::int64_t{8}}, {"n", std::int64_t{40}}, {"dtype", std::string("bfloat16")},
                                       {"variant", std::string("baseline")}});
  const auto& op = pr::find_operator(c.op);
  pm::host_inputs in(op, c, 3, false);
  EXPECT_TRUE(in.device_fills().empty());
  const auto whole = pr::make_inputs(op, c, 3);
  for (std::size_t i = 0; i < whole.size(); ++i) {
    if (whole[i].spec.role != pr::tensor_role::out) {
      EXPECT_EQ(in.tensors()[i].bytes, whole[i].bytes);
    }
  }
}
