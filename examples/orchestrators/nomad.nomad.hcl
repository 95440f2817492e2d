# corral as the entrypoint of a Nomad task (docker driver), driven through
# its doors (docs/orchestrators.md, "Nomad"): Nomad's own service checks on
# the HTTP endpoint doors.yaml opens (no Consul needed), a restart when
# corral stops answering, and a shutdown timeout set from the job to fit
# kill_timeout. The image is examples/Dockerfile's.
#   nomad job run examples/orchestrators/nomad.nomad.hcl
# examples/nomad/corral-web.nomad.hcl is the same job with a script check
# of `corral status --ready`, which needs Consul.
job "corral-web" {
  datacenters = ["dc1"]
  type        = "service"

  group "web" {
    network {
      port "http" {
        to = 8080
      }
      port "doors" {
        to = 9090
      }
    }

    # A task that failed for good makes corral exit with its code; Nomad
    # then restarts the task (here twice in 5 minutes), then reschedules.
    restart {
      attempts = 2
      interval = "5m"
      delay    = "10s"
      mode     = "fail"
    }

    task "corral" {
      driver = "docker"

      config {
        image      = "corral-web:latest"
        entrypoint = ["/usr/local/bin/corral"]
        args       = ["run", "/etc/corral/corral.yaml", "/etc/corral/doors.yaml"]
        ports      = ["http", "doors"]
      }

      # corral's bound on its shutdown, 5 s under kill_timeout: Nomad sends
      # kill_signal, waits kill_timeout (at most the client's
      # max_kill_timeout, 30 s by default), then SIGKILLs.
      env {
        CORRAL_SHUTDOWN_TIMEOUT = "25s"
      }
      kill_signal  = "SIGTERM"
      kill_timeout = "30s"

      resources {
        cpu    = 100
        memory = 128
      }

      service {
        name     = "corral-web"
        port     = "http"
        provider = "nomad"

        # Out of the service's addresses while a task that should be up is
        # not ready (503).
        check {
          name     = "ready"
          type     = "http"
          port     = "doors"
          path     = "/readyz"
          interval = "5s"
          timeout  = "2s"
        }

        # corral itself: three failures in a row restart the task.
        check {
          name     = "alive"
          type     = "http"
          port     = "doors"
          path     = "/livez"
          interval = "10s"
          timeout  = "2s"

          check_restart {
            limit = 3
            grace = "30s"
          }
        }
      }

      # For Prometheus' nomad_sd_configs: scrape this service's /metrics.
      service {
        name     = "corral-web-metrics"
        port     = "doors"
        provider = "nomad"
        tags     = ["metrics"]
      }
    }
  }
}
