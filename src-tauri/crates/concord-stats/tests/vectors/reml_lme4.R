# Reference values for concord-stats' REML ICC (src/reml.rs), computed with R's lme4.
#
#   apt-get install r-cran-lme4      # Debian/Ubuntu; or install.packages("lme4")
#   Rscript reml_lme4.R              # from this directory; writes reml_lme4.json
#
# For each design: the ratings, lmer's REML variance components of score ~ 1 + (1|target) +
# (1|rater) and of score ~ 1 + (1|target), its REML criterion, the ICCs, and 95% profile-likelihood
# intervals for ICC1/ICC2/ICC3 computed from lme4's own deviance function (devFunOnly = TRUE):
# the REML criterion minimised over the free relative SD with the ICC held fixed, and the limits
# where it exceeds the minimum by qchisq(0.95, 1). Every design uses a fixed seed.

suppressPackageStartupMessages(library(lme4))

ctrl <- lmerControl(optimizer = "bobyqa", optCtrl = list(rhobeg = 0.2, rhoend = 1e-10, maxfun = 1e5),
                    check.conv.singular = "ignore")
cut <- qchisq(0.95, 1)

num <- function(x) if (is.finite(x)) sprintf("%.15g", x) else "null"

profile_ci <- function(profile, rho_hat, dev_min) {
  g <- function(rho) profile(rho) - dev_min - cut
  rho_max <- 1 - 1e-9
  lower <- if (rho_hat <= 0 || g(0) <= 0) 0 else uniroot(g, c(0, rho_hat), tol = 1e-12)$root
  upper <- if (g(rho_max) <= 0) 1 else uniroot(g, c(rho_hat, rho_max), tol = 1e-12)$root
  c(lower, upper)
}

one_case <- function(name, why, d) {
  d$target <- factor(d$target)
  d$rater <- factor(d$rater)
  fit <- lmer(score ~ 1 + (1 | target) + (1 | rater), data = d, REML = TRUE, control = ctrl)
  fit1 <- lmer(score ~ 1 + (1 | target), data = d, REML = TRUE, control = ctrl)
  vc <- as.data.frame(VarCorr(fit))
  vt <- vc$vcov[vc$grp == "target"]
  vr <- vc$vcov[vc$grp == "rater"]
  ve <- vc$vcov[vc$grp == "Residual"]
  vc1 <- as.data.frame(VarCorr(fit1))
  vt1 <- vc1$vcov[vc1$grp == "target"]
  ve1 <- vc1$vcov[vc1$grp == "Residual"]
  icc1 <- vt1 / (vt1 + ve1)
  icc2 <- vt / (vt + vr + ve)
  icc3 <- vt / (vt + ve)

  dev <- lmer(score ~ 1 + (1 | target) + (1 | rater), data = d, REML = TRUE, devFunOnly = TRUE)
  dev1 <- lmer(score ~ 1 + (1 | target), data = d, REML = TRUE, devFunOnly = TRUE)
  tnames <- names(getME(fit, "theta"))
  at <- function(tt, tr) {
    th <- numeric(2)
    th[grepl("^target", tnames)] <- tt
    th[grepl("^rater", tnames)] <- tr
    dev(th)
  }
  dev_min <- as.numeric(REMLcrit(fit))
  dev1_min <- as.numeric(REMLcrit(fit1))
  r_hat <- sqrt(vr / ve)
  r_hi <- max(10 * r_hat, 3)
  prof_r <- function(theta_t) {
    o <- optimize(function(r) at(theta_t(r), r), c(0, r_hi), tol = 1e-10)$objective
    min(o, at(theta_t(0), 0))
  }
  ci1 <- profile_ci(function(rho) dev1(sqrt(rho / (1 - rho))), icc1, dev1_min)
  ci3 <- profile_ci(function(rho) prof_r(function(r) sqrt(rho / (1 - rho))), icc3, dev_min)
  ci2 <- profile_ci(function(rho) prof_r(function(r) sqrt(rho / (1 - rho) * (1 + r^2))), icc2, dev_min)

  ratings <- paste0("[", as.integer(d$target) - 1, ",", as.integer(d$rater) - 1, ",",
                    sapply(d$score, num), "]", collapse = ",")
  paste0(
    "{\"name\":\"", name, "\",\"why\":\"", why, "\",",
    "\"ratings\":[", ratings, "],",
    "\"variance\":{\"target\":", num(vt), ",\"rater\":", num(vr), ",\"residual\":", num(ve), "},",
    "\"one_way\":{\"target\":", num(vt1), ",\"residual\":", num(ve1), "},",
    "\"intercept\":", num(fixef(fit)[[1]]), ",",
    "\"reml_criterion\":", num(dev_min), ",",
    "\"singular\":", tolower(isSingular(fit)), ",",
    "\"icc\":{\"ICC1\":", num(icc1), ",\"ICC2\":", num(icc2), ",\"ICC3\":", num(icc3), "},",
    "\"ci95\":{\"ICC1\":[", num(ci1[1]), ",", num(ci1[2]), "],\"ICC2\":[", num(ci2[1]), ",", num(ci2[2]),
    "],\"ICC3\":[", num(ci3[1]), ",", num(ci3[2]), "]}}"
  )
}

simulate <- function(seed, n, raters, per_target, sd_t, sd_r, sd_e, round_to = NA) {
  set.seed(seed)
  a <- rnorm(n, 0, sd_t)
  b <- rnorm(raters, 0, sd_r)
  rows <- list()
  for (i in seq_len(n)) {
    k <- if (length(per_target) == 1) per_target else sample(per_target, 1)
    js <- sort(sample(raters, k))
    y <- 3 + a[i] + b[js] + rnorm(k, 0, sd_e)
    if (!is.na(round_to)) y <- pmin(5, pmax(1, round(y / round_to) * round_to))
    rows[[i]] <- data.frame(target = i, rater = js, score = y)
  }
  do.call(rbind, rows)
}

cases <- character(0)
# Complete, balanced: 30 targets x 4 raters.
cases <- c(cases, one_case("balanced_30x4", "complete crossed design",
                           simulate(11, 30, 4, 4, 1.0, 0.5, 0.8)))
# Incomplete: each of 60 targets rated by 2 of 6 raters (Concord's assignment).
cases <- c(cases, one_case("incomplete_k2_of_6", "60 targets, 2 of 6 raters each",
                           simulate(12, 60, 6, 2, 1.0, 0.4, 0.7)))
# Unbalanced: 1 to 5 of 5 raters per target, Likert scores rounded to 1..5.
cases <- c(cases, one_case("unbalanced_likert", "1-5 of 5 raters per target, integer 1-5 scores",
                           simulate(13, 80, 5, 1:5, 0.9, 0.3, 0.8, round_to = 1)))
# Incomplete with many raters: 300 targets, 3 of 10.
cases <- c(cases, one_case("incomplete_k3_of_10", "300 targets, 3 of 10 raters each",
                           simulate(14, 300, 10, 3, 0.7, 0.6, 0.9)))
# Boundary: no rater effect, rater means made exactly equal in a complete design (sigma2_r = 0).
d <- simulate(15, 20, 4, 4, 1.0, 0.0, 0.6)
d$score <- d$score - ave(d$score, d$rater) + mean(d$score)
cases <- c(cases, one_case("boundary_rater", "rater means equal: rater variance at 0",
                           d))
# Boundary: no target effect, target means made exactly equal (sigma2_t = 0).
d <- simulate(16, 25, 3, 3, 0.0, 0.5, 0.6)
d$score <- d$score - ave(d$score, d$target) + mean(d$score)
cases <- c(cases, one_case("boundary_target", "target means equal: target variance at 0",
                           d))
# Weak target signal in an incomplete design.
cases <- c(cases, one_case("weak_signal_k2_of_5", "small target variance, 2 of 5 raters",
                           simulate(17, 40, 5, 2, 0.3, 0.5, 1.0)))

out <- paste0("{\"generator\":\"reml_lme4.R\",\"lme4\":\"", as.character(packageVersion("lme4")),
              "\",\"R\":\"", R.version$major, ".", R.version$minor, "\",\"cases\":[",
              paste(cases, collapse = ","), "]}\n")
writeLines(out, "reml_lme4.json", sep = "")
cat("wrote reml_lme4.json with", length(cases), "cases\n")
