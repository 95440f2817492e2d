# corral as the entrypoint of a Nomad task (docker driver), with the image of
# examples/Dockerfile (docker build -f examples/Dockerfile -t corral-web .).
#   nomad job run examples/nomad/corral-web.nomad.hcl
job "corral-web" {
  datacenters = ["dc1"]
  type        = "service"

  group "web" {
    network {
      port "http" {
        to = 8080
      }
    }

    task "corral" {
      driver = "docker"

      config {
        image      = "corral-web:latest"
        entrypoint = ["/usr/local/bin/corral"]
        args       = ["run", "/etc/corral/corral.yaml"]
        ports      = ["http"]
      }

      # Nomad sends kill_signal, waits kill_timeout, then SIGKILLs. Keep it
      # above shutdown_timeout (20s in /etc/corral/corral.yaml) so that
      # corral's reverse-order shutdown and poststop tasks finish first (and
      # within the client's max_kill_timeout, 30s by default).
      kill_signal  = "SIGTERM"
      kill_timeout = "30s"

      resources {
        cpu    = 100
        memory = 128
      }

      service {
        name     = "corral-web"
        port     = "http"
        # Script checks need Consul: Nomad's own service provider runs only
        # http and tcp checks.
        provider = "consul"

        # `corral status --ready` exits 0 only when every main task and
        # sidecar is running and ready.
        check {
          name     = "corral ready"
          type     = "script"
          command  = "/usr/local/bin/corral"
          args     = ["status", "--ready"]
          interval = "10s"
          timeout  = "3s"
        }
      }
    }
  }
}
