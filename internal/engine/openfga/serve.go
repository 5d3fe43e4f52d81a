package openfga

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	grpc_prometheus "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	grpc_ctxtags "github.com/grpc-ecosystem/go-grpc-middleware/tags"
	grpc_recovery "github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/recovery"
	grpc_runtime "github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	authzenv1 "github.com/openfga/api/proto/authzen/v1"
	openfgav1 "github.com/openfga/api/proto/openfga/v1"
	"github.com/openfga/openfga/pkg/encoder"
	"github.com/openfga/openfga/pkg/gateway"
	"github.com/openfga/openfga/pkg/logger"
	"github.com/openfga/openfga/pkg/middleware"
	httpmiddleware "github.com/openfga/openfga/pkg/middleware/http"
	"github.com/openfga/openfga/pkg/middleware/logging"
	"github.com/openfga/openfga/pkg/middleware/recovery"
	"github.com/openfga/openfga/pkg/middleware/requestid"
	"github.com/openfga/openfga/pkg/middleware/storeid"
	"github.com/openfga/openfga/pkg/middleware/validator"
	"github.com/openfga/openfga/pkg/server"
	serverconfig "github.com/openfga/openfga/pkg/server/config"
	serverErrors "github.com/openfga/openfga/pkg/server/errors"
	"github.com/openfga/openfga/pkg/server/health"
	"github.com/openfga/openfga/pkg/storage"
	"github.com/openfga/openfga/pkg/storage/memory"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/cors"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthv1pb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"
)

// This file assembles OpenFGA's server as OpenFGA's own run command (cmd/run) does, from
// OpenFGA's public packages only. cmd/run itself is not linked: it links every datastore,
// Kubernetes' certificate watcher and client, and Docker's client, which more than doubled
// authzbench's build. What it configures from internal packages is left to pkg/server's own
// defaults, which are the same values: the Check planner (internal/planner, built by
// NewServerWithOpts with serverconfig's eviction threshold and cleanup interval) and
// authentication (internal/authn; method "none", OpenFGA's default, whose interceptor admits
// every request, so it is left out). What OpenFGA's run does beyond this (TLS, tracing, the
// profiler, the playground, other datastores) is refused by the command line, naming the flag.

// serveError is a failure after the settings were accepted: a port in use, a server that
// stopped on an error. It exits 1, not 2.
type serveError struct{ error }

func (e serveError) Unwrap() error { return e.error }

// serve runs OpenFGA's server with cfg until ctx ends or SIGINT or SIGTERM arrives, then
// shuts it down gracefully, within cfg.ShutdownTimeout.
func serve(ctx context.Context, cfg *serverconfig.Config) error {
	log, err := logger.NewLogger(logger.WithFormat(cfg.Log.Format), logger.WithLevel(cfg.Log.Level),
		logger.WithTimestampFormat(cfg.Log.TimestampFormat))
	if err != nil {
		return usageError{fmt.Errorf("OpenFGA's logger: %w", err)}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	s := &assembly{cfg: cfg, log: log, failed: make(chan error, 4)}
	defer s.shutdown()
	if err := s.start(ctx); err != nil {
		return serveError{err}
	}
	select {
	case <-ctx.Done():
		return nil
	case err := <-s.failed:
		return serveError{err}
	}
}

// assembly is one running server: what start built, in the order shutdown undoes it.
type assembly struct {
	cfg    *serverconfig.Config
	log    logger.Logger
	failed chan error // a listener's Serve that stopped on its own

	svr        *server.Server
	datastore  storage.OpenFGADatastore
	grpcServer *grpc.Server
	gatewayTo  *grpc.ClientConn
	httpServer *http.Server
	metrics    *http.Server
	rpcMetrics *grpc_prometheus.ServerMetrics
	socketDir  string
}

func (s *assembly) start(ctx context.Context) error {
	cfg := s.cfg
	// Every listener first, so that a port in use is an error before anything serves.
	grpcLis, err := net.Listen("tcp", cfg.GRPC.Addr)
	if err != nil {
		return fmt.Errorf("gRPC server (--grpc-addr): %w", err)
	}
	httpLis, err := net.Listen("tcp", cfg.HTTP.Addr)
	if err != nil {
		grpcLis.Close()
		return fmt.Errorf("HTTP server (--http-addr): %w", err)
	}
	var metricsLis net.Listener
	if cfg.Metrics.Enabled {
		if metricsLis, err = net.Listen("tcp", cfg.Metrics.Addr); err != nil {
			grpcLis.Close()
			httpLis.Close()
			return fmt.Errorf("metrics server (--metrics-addr): %w", err)
		}
	}

	// OpenFGA enables some experimentals by default, whatever the user adds.
	experimentals := append(serverconfig.DefaultConfig().Experimentals, cfg.Experimentals...)
	s.log.Info(fmt.Sprintf("using '%v' storage engine", cfg.Datastore.Engine))
	var datastore storage.OpenFGADatastore
	tokens := encoder.NewStringContinuationTokenSerializer()
	if cfg.Datastore.Engine == "memory" {
		datastore = memory.New(memory.WithMaxTypesPerAuthorizationModel(cfg.MaxTypesPerAuthorizationModel),
			memory.WithMaxTuplesPerWrite(cfg.MaxTuplesPerWrite))
	} else {
		// As OpenFGA's run opens them, its pool metrics under MetricsPrefix (DatastoreConfig).
		var ser encoder.ContinuationTokenSerializer
		datastore, ser, err = DatastoreConfig{Engine: cfg.Datastore.Engine, URI: cfg.Datastore.URI,
			MaxConns: cfg.Datastore.MaxOpenConns, MinConns: cfg.Datastore.MinOpenConns}.Open(s.log)
		if err != nil {
			grpcLis.Close()
			httpLis.Close()
			if metricsLis != nil {
				metricsLis.Close()
			}
			return err
		}
		tokens = ser
	}
	s.datastore = datastore
	s.svr, err = server.NewServerWithOpts(append(serverOptions(cfg, s.log, tokens),
		server.WithDatastore(datastore),
		server.WithExperimentals(experimentals...),
		server.WithContext(ctx))...)
	if err != nil {
		grpcLis.Close()
		httpLis.Close()
		if metricsLis != nil {
			metricsLis.Close()
		}
		datastore.Close()
		return fmt.Errorf("OpenFGA's server: %w", err)
	}
	s.log.Info("starting openfga service...", zap.String("version", Version()), zap.Strings("experimentals", experimentals))

	if metricsLis != nil {
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.Handler())
		s.metrics = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		s.serveHTTP("prometheus metrics server", s.metrics, metricsLis)
	}

	s.grpcServer = grpc.NewServer(s.grpcOptions()...)
	openfgav1.RegisterOpenFGAServiceServer(s.grpcServer, s.svr)
	authzenv1.RegisterAuthZenServiceServer(s.grpcServer, s.svr)
	healthv1pb.RegisterHealthServer(s.grpcServer, &health.Checker{TargetService: s.svr, TargetServiceName: openfgav1.OpenFGAService_ServiceDesc.ServiceName})
	reflection.Register(s.grpcServer)
	s.serveGRPC("gRPC server", grpcLis)

	target, err := s.gatewayTarget(grpcLis.Addr().String())
	if err != nil {
		httpLis.Close()
		return err
	}
	if s.gatewayTo, err = grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
		httpLis.Close()
		return fmt.Errorf("HTTP gateway's connection to the gRPC server at %s: %w", target, err)
	}
	handler, err := s.gateway(ctx)
	if err != nil {
		httpLis.Close()
		return err
	}
	s.httpServer = &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	s.serveHTTP("HTTP server", s.httpServer, httpLis)
	return nil
}

// serverOptions are pkg/server's settings from cfg, as OpenFGA's run passes them: what the
// flags do not set is serverconfig's default, so the same as OpenFGA's.
func serverOptions(cfg *serverconfig.Config, log logger.Logger, tokens encoder.ContinuationTokenSerializer) []server.OpenFGAServiceV1Option {
	return []server.OpenFGAServiceV1Option{
		server.WithAuthzenBaseURL(cfg.Authzen.BaseURL),
		// The memory datastore's continuation tokens are strings, SQL's their own.
		server.WithContinuationTokenSerializer(tokens),
		server.WithAuthorizationModelCacheSize(cfg.Datastore.MaxCacheSize),
		server.WithTypesystemCacheSize(cfg.Datastore.MaxTypesystemCacheSize),
		server.WithLogger(log),
		server.WithTransport(gateway.NewRPCTransport(log)),
		server.WithResolveNodeLimit(cfg.ResolveNodeLimit),
		server.WithResolveNodeBreadthLimit(cfg.ResolveNodeBreadthLimit),
		server.WithChangelogHorizonOffset(cfg.ChangelogHorizonOffset),
		server.WithReadChangesMaxPageSize(cfg.ReadChangesMaxPageSize),
		server.WithListObjectsDeadline(cfg.ListObjectsDeadline),
		server.WithListObjectsMaxResults(cfg.ListObjectsMaxResults),
		server.WithListObjectsPipelineEnabled(cfg.ListObjectsPipelineEnabled),
		server.WithListUsersDeadline(cfg.ListUsersDeadline),
		server.WithListUsersMaxResults(cfg.ListUsersMaxResults),
		server.WithMaxConcurrentReadsForListObjects(cfg.MaxConcurrentReadsForListObjects),
		server.WithMaxConcurrentReadsForCheck(cfg.MaxConcurrentReadsForCheck),
		server.WithMaxConcurrentReadsForListUsers(cfg.MaxConcurrentReadsForListUsers),
		server.WithCacheControllerEnabled(cfg.CacheController.Enabled),
		server.WithCacheControllerTTL(cfg.CacheController.TTL),
		server.WithCheckCacheLimit(cfg.CheckCache.Limit),
		server.WithCheckIteratorCacheEnabled(cfg.CheckIteratorCache.Enabled),
		server.WithCheckIteratorCacheMaxResults(cfg.CheckIteratorCache.MaxResults),
		server.WithCheckIteratorCacheTTL(cfg.CheckIteratorCache.TTL),
		server.WithCheckQueryCacheEnabled(cfg.CheckQueryCache.Enabled),
		server.WithCheckQueryCacheTTL(cfg.CheckQueryCache.TTL),
		server.WithRequestDurationByQueryHistogramBuckets(uints(cfg.RequestDurationDatastoreQueryCountBuckets)),
		server.WithRequestDurationByDispatchCountHistogramBuckets(uints(cfg.RequestDurationDispatchCountBuckets)),
		server.WithMaxAuthorizationModelSizeInBytes(cfg.MaxAuthorizationModelSizeInBytes),
		server.WithContextPropagationToDatastore(cfg.ContextPropagationToDatastore),
		server.WithDispatchThrottlingCheckResolverEnabled(cfg.CheckDispatchThrottling.Enabled),
		server.WithDispatchThrottlingCheckResolverFrequency(cfg.CheckDispatchThrottling.Frequency),
		server.WithDispatchThrottlingCheckResolverThreshold(cfg.CheckDispatchThrottling.Threshold),
		server.WithDispatchThrottlingCheckResolverMaxThreshold(cfg.CheckDispatchThrottling.MaxThreshold),
		server.WithListObjectsDispatchThrottlingEnabled(cfg.ListObjectsDispatchThrottling.Enabled),
		server.WithListObjectsDispatchThrottlingFrequency(cfg.ListObjectsDispatchThrottling.Frequency),
		server.WithListObjectsDispatchThrottlingThreshold(cfg.ListObjectsDispatchThrottling.Threshold),
		server.WithListObjectsDispatchThrottlingMaxThreshold(cfg.ListObjectsDispatchThrottling.MaxThreshold),
		server.WithListUsersDispatchThrottlingEnabled(cfg.ListUsersDispatchThrottling.Enabled),
		server.WithListUsersDispatchThrottlingFrequency(cfg.ListUsersDispatchThrottling.Frequency),
		server.WithListUsersDispatchThrottlingThreshold(cfg.ListUsersDispatchThrottling.Threshold),
		server.WithListUsersDispatchThrottlingMaxThreshold(cfg.ListUsersDispatchThrottling.MaxThreshold),
		server.WithCheckDatabaseThrottle(cfg.CheckDatastoreThrottle.Threshold, cfg.CheckDatastoreThrottle.Duration),
		server.WithListObjectsDatabaseThrottle(cfg.ListObjectsDatastoreThrottle.Threshold, cfg.ListObjectsDatastoreThrottle.Duration),
		server.WithListUsersDatabaseThrottle(cfg.ListUsersDatastoreThrottle.Threshold, cfg.ListUsersDatastoreThrottle.Duration),
		server.WithListObjectsIteratorCacheEnabled(cfg.ListObjectsIteratorCache.Enabled),
		server.WithListObjectsIteratorCacheMaxResults(cfg.ListObjectsIteratorCache.MaxResults),
		server.WithListObjectsIteratorCacheTTL(cfg.ListObjectsIteratorCache.TTL),
		server.WithCacheTTLJitterPercentage(cfg.CacheTTLJitterPercentage),
		server.WithMaxChecksPerBatchCheck(cfg.MaxChecksPerBatchCheck),
		server.WithMaxConcurrentChecksPerBatchCheck(cfg.MaxConcurrentChecksPerBatchCheck),
		server.WithSharedIteratorEnabled(cfg.SharedIterator.Enabled),
		server.WithSharedIteratorLimit(cfg.SharedIterator.Limit),
		// OpenFGA's run gives shared iterators a little longer than a request may take.
		server.WithSharedIteratorTTL(cfg.RequestTimeout + 2*time.Second),
		server.WithAccessControlParams(cfg.AccessControl.Enabled, cfg.AccessControl.StoreID, cfg.AccessControl.ModelID, cfg.Authn.Method),
	}
}

// uints reads the histogram buckets serverconfig keeps as strings (cfg.Verify checked them).
func uints(values []string) []uint {
	out := make([]uint, 0, len(values))
	for _, v := range values {
		if n, err := strconv.ParseUint(v, 10, 0); err == nil {
			out = append(out, uint(n))
		}
	}
	return out
}

// grpcOptions is OpenFGA's interceptor chain, in its order: panic recovery first, request and
// store ids for the logs, the request timeout, logging and validation, then Prometheus metrics.
func (s *assembly) grpcOptions() []grpc.ServerOption {
	cfg, log := s.cfg, s.log
	opts := []grpc.ServerOption{
		grpc.MaxRecvMsgSize(cfg.GRPC.MaxRecvMsgBytes),
		grpc.ChainUnaryInterceptor(
			grpc_recovery.UnaryServerInterceptor(grpc_recovery.WithRecoveryHandlerContext(recovery.PanicRecoveryHandler(log))),
			grpc_ctxtags.UnaryServerInterceptor(),
			requestid.NewUnaryInterceptor(),
		),
		grpc.ChainStreamInterceptor(
			grpc_recovery.StreamServerInterceptor(grpc_recovery.WithRecoveryHandlerContext(recovery.PanicRecoveryHandler(log))),
			grpc_ctxtags.StreamServerInterceptor(),
			requestid.NewStreamingInterceptor(),
		),
	}
	if cfg.RequestTimeout > 0 {
		timeout := middleware.NewTimeoutInterceptor(cfg.RequestTimeout, log)
		opts = append(opts, grpc.ChainUnaryInterceptor(timeout.NewUnaryTimeoutInterceptor()),
			grpc.ChainStreamInterceptor(timeout.NewStreamTimeoutInterceptor()))
	}
	opts = append(opts,
		grpc.ChainUnaryInterceptor(storeid.NewUnaryInterceptor(), logging.NewLoggingInterceptor(log), validator.UnaryServerInterceptor()),
		grpc.ChainStreamInterceptor(validator.StreamServerInterceptor()),
	)
	if cfg.Metrics.Enabled {
		var metricsOpts []grpc_prometheus.ServerMetricsOption
		if cfg.Metrics.EnableRPCHistograms {
			metricsOpts = append(metricsOpts, grpc_prometheus.WithServerHandlingTimeHistogram())
		}
		s.rpcMetrics = grpc_prometheus.NewServerMetrics(metricsOpts...)
		prometheus.MustRegister(s.rpcMetrics)
		opts = append(opts, grpc.ChainUnaryInterceptor(s.rpcMetrics.UnaryServerInterceptor()),
			grpc.ChainStreamInterceptor(s.rpcMetrics.StreamServerInterceptor()))
	}
	// These wrap the server stream and so come last, as in OpenFGA's run.
	return append(opts, grpc.ChainStreamInterceptor(storeid.NewStreamingInterceptor(), logging.NewStreamingLoggingInterceptor(log)))
}

// gatewayTarget is where the HTTP gateway reaches the gRPC server: a unix socket in a private
// directory, served by the same gRPC server, as OpenFGA's run does, so that the HTTP API
// measured here pays what OpenFGA's pays (no loopback TCP hop); loopback TCP to the gRPC
// address where no socket can be made.
func (s *assembly) gatewayTarget(grpcAddr string) (string, error) {
	dir, err := os.MkdirTemp("", fmt.Sprintf("authzbench-openfga-%d-*", os.Getpid()))
	if err == nil {
		path := filepath.Join(dir, "grpc.sock")
		var lis net.Listener
		if lis, err = net.Listen("unix", path); err == nil {
			s.socketDir = dir
			s.serveGRPC("gRPC server on the gateway's unix socket", lis)
			return "unix://" + path, nil
		}
		os.RemoveAll(dir)
	}
	s.log.Warn("the HTTP gateway reaches the gRPC server over loopback TCP: no unix socket", zap.Error(err))
	return grpcAddr, nil
}

// gateway is OpenFGA's HTTP API: grpc-gateway's mux over the gRPC server, with OpenFGA's
// response and error encoding, /healthz, its model-id header, CORS and panic recovery.
func (s *assembly) gateway(ctx context.Context) (http.Handler, error) {
	toEncoded := func(err error) *serverErrors.EncodedError {
		return serverErrors.NewEncodedError(serverErrors.ConvertToEncodedErrorCode(status.Convert(err)), err.Error())
	}
	mux := grpc_runtime.NewServeMux(
		grpc_runtime.WithForwardResponseOption(httpmiddleware.HTTPResponseModifier),
		grpc_runtime.WithErrorHandler(func(ctx context.Context, _ *grpc_runtime.ServeMux, _ grpc_runtime.Marshaler, w http.ResponseWriter, r *http.Request, err error) {
			httpmiddleware.CustomHTTPErrorHandler(ctx, w, r, toEncoded(err))
		}),
		grpc_runtime.WithStreamErrorHandler(func(_ context.Context, err error) *status.Status { return status.Convert(toEncoded(err)) }),
		grpc_runtime.WithHealthzEndpoint(healthv1pb.NewHealthClient(s.gatewayTo)),
		grpc_runtime.WithOutgoingHeaderMatcher(func(key string) (string, bool) { return key, true }),
		grpc_runtime.WithIncomingHeaderMatcher(func(key string) (string, bool) {
			// The AuthZEN endpoints read the model id from this header.
			if strings.EqualFold(key, server.AuthorizationModelIDHeader) {
				return strings.ToLower(key), true
			}
			return grpc_runtime.DefaultHeaderMatcher(key)
		}),
	)
	// The gateway's deadline for a call upstream, as OpenFGA's run sets it.
	grpc_runtime.DefaultContextTimeout = serverconfig.DefaultContextTimeout(s.cfg)
	if err := openfgav1.RegisterOpenFGAServiceHandler(ctx, mux, s.gatewayTo); err != nil {
		return nil, fmt.Errorf("HTTP gateway: %w", err)
	}
	if err := authzenv1.RegisterAuthZenServiceHandler(ctx, mux, s.gatewayTo); err != nil {
		return nil, fmt.Errorf("HTTP gateway: %w", err)
	}
	return recovery.HTTPPanicRecoveryHandler(cors.New(cors.Options{
		AllowedOrigins:   s.cfg.HTTP.CORSAllowedOrigins,
		AllowCredentials: true,
		AllowedHeaders:   s.cfg.HTTP.CORSAllowedHeaders,
		AllowedMethods: []string{http.MethodGet, http.MethodPost, http.MethodHead, http.MethodPatch,
			http.MethodDelete, http.MethodPut},
	}).Handler(mux), s.log), nil
}

// serveGRPC serves the gRPC server on lis; a Serve that ends on its own is a failure.
func (s *assembly) serveGRPC(name string, lis net.Listener) {
	s.log.Info(fmt.Sprintf("starting %s on '%s'...", name, lis.Addr()))
	go func() {
		if err := s.grpcServer.Serve(lis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			s.failed <- fmt.Errorf("%s: %w", name, err)
		}
	}()
}

// serveHTTP serves srv on lis; a Serve that ends on its own is a failure.
func (s *assembly) serveHTTP(name string, srv *http.Server, lis net.Listener) {
	s.log.Info(fmt.Sprintf("starting %s on '%s'...", name, lis.Addr()))
	go func() {
		if err := srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.failed <- fmt.Errorf("%s: %w", name, err)
		}
	}()
}

// shutdown stops what start started, the HTTP side first so that no request reaches a gRPC
// server already stopping, within the shutdown timeout; a gRPC server still draining then is
// stopped hard.
func (s *assembly) shutdown() {
	s.log.Info("attempting to shutdown gracefully...")
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	for _, srv := range []*http.Server{s.httpServer, s.metrics} {
		if srv != nil {
			if err := srv.Shutdown(ctx); err != nil {
				s.log.Info("HTTP shutdown", zap.Error(err))
			}
		}
	}
	if s.gatewayTo != nil {
		s.gatewayTo.Close()
	}
	if s.grpcServer != nil {
		stopped := make(chan struct{})
		go func() { s.grpcServer.GracefulStop(); close(stopped) }()
		select {
		case <-stopped:
		case <-ctx.Done():
			s.grpcServer.Stop()
		}
	}
	if s.svr != nil {
		s.svr.Close()
	}
	if s.datastore != nil {
		s.datastore.Close()
	}
	if s.rpcMetrics != nil {
		prometheus.Unregister(s.rpcMetrics)
	}
	if s.socketDir != "" {
		os.RemoveAll(s.socketDir)
	}
	s.log.Info("graceful shutdown completed successfully")
}
