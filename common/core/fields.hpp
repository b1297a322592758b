// A step's own parameters for the results record (Step::describe), without the JSON library.
// Every GPU step declares describe(), and nlohmann/json.hpp costs nvcc about 5 s of a trivial
// kernel's 7.7 s (report/evidence/cpu-vm-nvcc-compile-cost.txt): so a step sees this handle,
// and only fields.cpp and the harness (host code compiled once) read the library.
//
// A Fields is a handle on one JSON object of the record under construction; the values land
// as nlohmann::json would store the same C++ value (params["x"] = v and params.set("x", v)
// write the same record).
#pragma once
#include <nlohmann/json_fwd.hpp>  // the declaration of nlohmann::json alone: no compile cost

#include <cstdint>
#include <string>
#include <type_traits>

namespace core {

class Fields {
 public:
  // Writes into `object`, which must outlive this handle; null becomes an empty object.
  explicit Fields(nlohmann::json& object);

  // key = value. The JSON type follows the C++ type, as in the library: bool a boolean, a
  // signed integer (int, long) a signed number, an unsigned one (size_t) an unsigned number,
  // float and double a floating-point number. A template, so that no value converts to
  // another overload's type (an int to bool, a size_t to double).
  template <class T>
  Fields& set(const std::string& key, T value) {
    static_assert(std::is_arithmetic_v<T>, "Fields::set takes numbers, bool and strings");
    if constexpr (std::is_same_v<T, bool>)
      return set_boolean(key, value);
    else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
      return set_signed(key, value);
    else if constexpr (std::is_integral_v<T>)
      return set_unsigned(key, value);
    else
      return set_real(key, value);
  }
  // Strings: preferred to the template (a non-template wins a tie), so text stays text.
  Fields& set(const std::string& key, const char* value);
  Fields& set(const std::string& key, const std::string& value);

  // The object at `key`, made empty where there is none.
  Fields object(const std::string& key);
  // A new empty object at the end of the array at `key` (made where there is none). The handle
  // is good until the next append to the same array (the array may move its elements).
  Fields append(const std::string& key);

 private:
  Fields& set_boolean(const std::string& key, bool value);
  Fields& set_signed(const std::string& key, std::int64_t value);
  Fields& set_unsigned(const std::string& key, std::uint64_t value);
  Fields& set_real(const std::string& key, double value);

  nlohmann::json* object_;
};

}  // namespace core
