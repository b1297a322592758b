#include "core/rendezvous.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>

#include "core/error.hpp"

namespace core {

namespace {

constexpr char kMagic[8] = {'s', 't', 'e', 'p', 'w', 'i', 's', 'e'};

using Clock = std::chrono::steady_clock;

struct Socket {
  int fd = -1;
  explicit Socket(int f) : fd(f) {}
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket() {
    if (fd >= 0) ::close(fd);
  }
};

void split_address(const std::string& address, std::string& host, std::string& port) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size())
    throw UsageError("rendezvous address '" + address + "': expected host:port (STEPWISE_ROOT)");
  host = address.substr(0, colon);
  port = address.substr(colon + 1);
  char* end = nullptr;
  const long p = std::strtol(port.c_str(), &end, 10);
  if (*end != '\0' || p < 1 || p > 65535)
    throw UsageError("rendezvous address '" + address + "': the port must be 1 .. 65535");
}

double seconds_left(Clock::time_point deadline) {
  return std::chrono::duration<double>(deadline - Clock::now()).count();
}

// Moves exactly n bytes, waiting at most until the deadline; false on a closed or silent peer.
bool send_all(int fd, const void* data, size_t n, Clock::time_point deadline) {
  const char* p = static_cast<const char*>(data);
  while (n) {
    pollfd w{fd, POLLOUT, 0};
    const double left = seconds_left(deadline);
    if (left <= 0 || ::poll(&w, 1, int(left * 1000) + 1) <= 0) return false;
    const ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL);
    if (k <= 0) return false;
    p += k, n -= size_t(k);
  }
  return true;
}
bool recv_all(int fd, void* data, size_t n, Clock::time_point deadline) {
  char* p = static_cast<char*>(data);
  while (n) {
    pollfd r{fd, POLLIN, 0};
    const double left = seconds_left(deadline);
    if (left <= 0 || ::poll(&r, 1, int(left * 1000) + 1) <= 0) return false;
    const ssize_t k = ::recv(fd, p, n, 0);
    if (k <= 0) return false;
    p += k, n -= size_t(k);
  }
  return true;
}

// The hello every non-root rank sends: magic, its rank, the run's size.
struct Hello {
  char magic[8];
  uint32_t rank, size;
};

std::vector<unsigned char> serve(const Ranks& ranks, const std::string& address, const std::string& port,
                                 const std::vector<unsigned char>& bytes, Clock::time_point deadline) {
  Socket listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (listener.fd < 0) throw RuntimeError(std::string("rendezvous: socket: ") + std::strerror(errno));
  const int one = 1;
  ::setsockopt(listener.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_addr.s_addr = htonl(INADDR_ANY);  // other hosts reach rank 0 through any interface
  at.sin_port = htons(uint16_t(std::stoi(port)));
  if (::bind(listener.fd, reinterpret_cast<sockaddr*>(&at), sizeof at) != 0 || ::listen(listener.fd, 64) != 0)
    throw RuntimeError("rendezvous: rank 0 cannot listen on port " + port + " (" + std::strerror(errno) +
                       "): another run may hold it; set STEPWISE_ROOT=host:port to another port");
  const uint64_t length = bytes.size();
  std::vector<bool> served(size_t(ranks.size), false);
  int waiting = ranks.size - 1;
  while (waiting > 0) {
    pollfd r{listener.fd, POLLIN, 0};
    const double left = seconds_left(deadline);
    if (left <= 0 || ::poll(&r, 1, int(left * 1000) + 1) <= 0)
      throw RuntimeError("rendezvous: rank 0 at " + address + " waited for " + std::to_string(ranks.size - 1) +
                         " ranks and met " + std::to_string(ranks.size - 1 - waiting) + " before its time ran out");
    Socket peer(::accept4(listener.fd, nullptr, nullptr, SOCK_CLOEXEC));
    if (peer.fd < 0) continue;
    // A stranger gets a few seconds to say hello, not the whole wait.
    const Clock::time_point hello_by = std::min(deadline, Clock::now() + std::chrono::seconds(5));
    Hello h{};
    if (!recv_all(peer.fd, &h, sizeof h, hello_by) || std::memcmp(h.magic, kMagic, sizeof kMagic) != 0 ||
        int(h.size) != ranks.size || h.rank == 0 || int(h.rank) >= ranks.size || served[h.rank])
      continue;  // not one of this run's ranks: dropped
    if (!send_all(peer.fd, kMagic, sizeof kMagic, deadline) || !send_all(peer.fd, &length, sizeof length, deadline) ||
        !send_all(peer.fd, bytes.data(), bytes.size(), deadline))
      continue;  // it hung up; it will try again
    served[h.rank] = true;
    --waiting;
  }
  return bytes;
}

std::vector<unsigned char> fetch(const Ranks& ranks, const std::string& address, const std::string& host,
                                 const std::string& port, Clock::time_point deadline) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int e = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); e != 0)
    throw UsageError("rendezvous address '" + address + "': " + ::gai_strerror(e));
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> keep(found, &::freeaddrinfo);
  while (seconds_left(deadline) > 0) {
    Socket s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (s.fd >= 0 && ::connect(s.fd, found->ai_addr, found->ai_addrlen) == 0) {
      Hello h{};
      std::memcpy(h.magic, kMagic, sizeof kMagic);
      h.rank = uint32_t(ranks.rank);
      h.size = uint32_t(ranks.size);
      char magic[8];
      uint64_t length = 0;
      if (send_all(s.fd, &h, sizeof h, deadline) && recv_all(s.fd, magic, sizeof magic, deadline) &&
          std::memcmp(magic, kMagic, sizeof kMagic) == 0 && recv_all(s.fd, &length, sizeof length, deadline) &&
          length <= (1u << 20)) {
        std::vector<unsigned char> bytes(length);
        if (recv_all(s.fd, bytes.data(), bytes.size(), deadline)) return bytes;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // rank 0 is not listening yet
  }
  throw RuntimeError("rendezvous: rank " + std::to_string(ranks.rank) + " could not meet rank 0 at " + address +
                     " in time (is rank 0 running, and STEPWISE_ROOT the same for every rank?)");
}

}  // namespace

std::vector<unsigned char> share_from_root(const Ranks& ranks, const std::string& address,
                                           const std::vector<unsigned char>& bytes, double timeout_s) {
  std::string host, port;
  split_address(address, host, port);
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  if (ranks.size == 1) return bytes;
  return ranks.root() ? serve(ranks, address, port, bytes, deadline) : fetch(ranks, address, host, port, deadline);
}

}  // namespace core
