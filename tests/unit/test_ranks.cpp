// The launcher's variables (core/ranks.hpp) and the rendezvous (core/rendezvous.hpp): three
// processes on this host meet through a TCP port and all receive rank 0's bytes.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <string>

#include "core/error.hpp"
#include "core/ranks.hpp"
#include "core/rendezvous.hpp"

namespace {

using Env = std::map<std::string, std::string>;

core::Ranks from(const Env& env) {
  return core::ranks_from([&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

std::string address_of(const Env& env) {
  return core::root_address([&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST(Ranks, NoLauncherIsOneProcess) {
  const core::Ranks r = from({});
  EXPECT_EQ(r.rank, 0);
  EXPECT_EQ(r.size, 1);
  EXPECT_EQ(r.local_rank, 0);
  EXPECT_TRUE(r.root());
  EXPECT_EQ(r.launcher, "none");
}

TEST(Ranks, EachLauncherIsRead) {
  core::Ranks r = from({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}});
  EXPECT_EQ(r.rank, 3);
  EXPECT_EQ(r.size, 4);
  EXPECT_EQ(r.local_rank, 1);
  EXPECT_EQ(r.launcher, "mpirun");
  EXPECT_FALSE(r.root());
  r = from({{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}, {"MPI_LOCALRANKID", "0"}});
  EXPECT_EQ(r.rank, 1);
  EXPECT_EQ(r.local_rank, 0);
  EXPECT_EQ(r.launcher, "pmi");
  r = from({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "8"}, {"SLURM_LOCALID", "1"}});
  EXPECT_EQ(r.rank, 5);
  EXPECT_EQ(r.size, 8);
  EXPECT_EQ(r.local_rank, 1);
  EXPECT_EQ(r.launcher, "slurm");
  // Without a local rank, one host: the rank.
  r = from({{"RANK", "1"}, {"WORLD_SIZE", "2"}});
  EXPECT_EQ(r.local_rank, 1);
  EXPECT_EQ(r.launcher, "env");
}

TEST(Ranks, TheInnermostLauncherWins) {
  // srun starting mpirun's processes: both sets are in the environment; mpirun's is the run's.
  const core::Ranks r = from({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"},
                              {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}});
  EXPECT_EQ(r.rank, 1);
  EXPECT_EQ(r.size, 2);
  EXPECT_EQ(r.launcher, "mpirun");
}

TEST(Ranks, InconsistentValuesAreRefusedByName) {
  auto refused = [](const Env& env, const std::string& named) {
    try {
      from(env);
    } catch (const core::UsageError& e) {
      return std::string(e.what()).find(named) != std::string::npos;
    }
    return false;
  };
  EXPECT_TRUE(refused({{"RANK", "2"}, {"WORLD_SIZE", "2"}}, "RANK=2"));
  EXPECT_TRUE(refused({{"RANK", "0"}, {"WORLD_SIZE", "0"}}, "WORLD_SIZE=0"));
  EXPECT_TRUE(refused({{"RANK", "-1"}, {"WORLD_SIZE", "2"}}, "RANK=-1"));
  EXPECT_TRUE(refused({{"RANK", "1x"}, {"WORLD_SIZE", "2"}}, "RANK=1x"));
  EXPECT_TRUE(refused({{"PMI_RANK", "0"}}, "PMI_SIZE"));
  EXPECT_TRUE(refused({{"OMPI_COMM_WORLD_SIZE", "2"}}, "OMPI_COMM_WORLD_RANK"));
  EXPECT_TRUE(refused({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "99999999999999"}}, "SLURM_NTASKS"));
}

TEST(Ranks, RootAddress) {
  EXPECT_EQ(address_of({}), "127.0.0.1:29517");
  EXPECT_EQ(address_of({{"STEPWISE_ROOT", "node0:4000"}, {"MASTER_ADDR", "x"}}), "node0:4000");
  EXPECT_EQ(address_of({{"MASTER_ADDR", "node1"}, {"MASTER_PORT", "29600"}}), "node1:29600");
  // One job id, one port, the same in every process; another job's differs (these two do).
  const std::string a = address_of({{"OMPI_MCA_ess_base_jobid", "1234567"}});
  EXPECT_EQ(a, address_of({{"OMPI_MCA_ess_base_jobid", "1234567"}}));
  EXPECT_NE(a, address_of({{"OMPI_MCA_ess_base_jobid", "1234568"}}));
  const int port = std::stoi(a.substr(a.rfind(':') + 1));
  EXPECT_GE(port, 20000);
  EXPECT_LT(port, 30000);
}

// A free port on this host, as the kernel hands one out (then released for the test to use).
int free_port();

TEST(Rendezvous, OneProcessNeedsNoNetwork) {
  const std::vector<unsigned char> bytes = {1, 2, 3};
  EXPECT_EQ(core::share_from_root(core::Ranks{}, "nowhere.invalid:1", bytes), bytes);
}

TEST(Rendezvous, RefusesABadAddress) {
  core::Ranks two;
  two.size = 2;
  EXPECT_THROW(core::share_from_root(two, "no-port", {}), core::UsageError);
  EXPECT_THROW(core::share_from_root(two, "host:0", {}), core::UsageError);
  EXPECT_THROW(core::share_from_root(two, "host:70000", {}), core::UsageError);
}

TEST(Rendezvous, EveryRankGetsRootsBytes) {
  const std::string address = "127.0.0.1:" + std::to_string(free_port());
  std::vector<unsigned char> id(128);
  for (size_t i = 0; i < id.size(); ++i) id[i] = static_cast<unsigned char>(i * 7 + 1);
  constexpr int kSize = 3;
  // Ranks 2 and 1 start first (they must wait for rank 0), in processes of their own.
  pid_t children[kSize] = {};
  for (int rank = kSize - 1; rank >= 1; --rank) {
    children[rank] = fork();
    ASSERT_GE(children[rank], 0);
    if (children[rank] == 0) {
      core::Ranks r;
      r.rank = rank;
      r.size = kSize;
      int code = 1;
      try {
        code = core::share_from_root(r, address, {}, 20) == id ? 0 : 1;
      } catch (...) {
        code = 2;
      }
      _exit(code);
    }
  }
  usleep(200 * 1000);
  core::Ranks root;
  root.size = kSize;
  EXPECT_EQ(core::share_from_root(root, address, id, 20), id);
  for (int rank = 1; rank < kSize; ++rank) {
    int status = 0;
    ASSERT_EQ(waitpid(children[rank], &status, 0), children[rank]);
    EXPECT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "rank " << rank << " did not receive rank 0's bytes";
  }
}

TEST(Rendezvous, RootGivesUpWhenARankNeverComes) {
  core::Ranks root;
  root.size = 2;
  EXPECT_THROW(core::share_from_root(root, "127.0.0.1:" + std::to_string(free_port()), {1}, 0.5), core::RuntimeError);
}

TEST(Rendezvous, ARankGivesUpWithoutRoot) {
  core::Ranks one;
  one.rank = 1;
  one.size = 2;
  EXPECT_THROW(core::share_from_root(one, "127.0.0.1:" + std::to_string(free_port()), {}, 0.5), core::RuntimeError);
}

}  // namespace

#include <netinet/in.h>
#include <sys/socket.h>

namespace {
int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  at.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&at), sizeof at);
  socklen_t len = sizeof at;
  getsockname(fd, reinterpret_cast<sockaddr*>(&at), &len);
  close(fd);
  return ntohs(at.sin_port);
}
}  // namespace
