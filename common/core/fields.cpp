#include "core/fields.hpp"

#include <nlohmann/json.hpp>

namespace core {

Fields::Fields(nlohmann::json& object) : object_(&object) {
  if (object_->is_null()) *object_ = nlohmann::json::object();
}

Fields& Fields::set(const std::string& key, const char* value) {
  (*object_)[key] = value;
  return *this;
}

Fields& Fields::set(const std::string& key, const std::string& value) {
  (*object_)[key] = value;
  return *this;
}

Fields Fields::object(const std::string& key) {
  nlohmann::json& j = (*object_)[key];
  return Fields(j);
}

Fields Fields::append(const std::string& key) {
  nlohmann::json& array = (*object_)[key];
  if (array.is_null()) array = nlohmann::json::array();
  array.push_back(nlohmann::json::object());
  return Fields(array.back());
}

Fields& Fields::set_boolean(const std::string& key, bool value) {
  (*object_)[key] = value;
  return *this;
}

Fields& Fields::set_signed(const std::string& key, std::int64_t value) {
  (*object_)[key] = value;
  return *this;
}

Fields& Fields::set_unsigned(const std::string& key, std::uint64_t value) {
  (*object_)[key] = value;
  return *this;
}

Fields& Fields::set_real(const std::string& key, double value) {
  (*object_)[key] = value;
  return *this;
}

}  // namespace core
