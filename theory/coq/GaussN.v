(* Product laws of n independent real coordinates, their likelihood ratios,
   and Proposition 2 for the paper's Gaussian channel (App. C, "Proof of
   Proposition 2"), generic in a 1-D family G of probability measures on R
   whose pairwise densities are dG_nu/dG_mu = exp(-ell mu nu) with
   E_{G mu}[ell mu nu] = c mu nu.
   Contents:
   - Marginals: for probability measures P1, P2 the integral of f(x.1)
     (resp. f(x.2)) under the product P1 x P2 is the integral of f under P1
     (resp. P2), and integrability transfers.
   - TwoFactor: if dQ1/dP1 = exp(-L1) and dQ2/dP2 = exp(-L2) then
     d(Q1 x Q2)/d(P1 x P2) = exp(-(L1 x.1 + L2 x.2)) and
     E[L1 x.1 + L2 x.2] = E[L1] + E[L2] (Lsum_int, Lsum_meas, Lsum_dens,
     Lsum_mean): the density measure (Density.v) agrees with Q1 x Q2 on
     rectangles (Tonelli), hence everywhere (product_measure_unique).
   - Rn m: the space of m.+1 coordinates in a measurable space T0 (the
     real line for the paper), built as iterated products
     (..(T0 * T0) * ..) * T0; coordn m i its i-th coordinate (measurable).
   - gprod m mu: the product law of independent coordinates with laws
     G (mu 0), ..., G (mu m) (iterated product_measure1); gprod_prob,
     gprod_indep (the law of a measurable rectangle is the product of the
     marginal laws), gprod_marginal (coordinate i has law G (mu i)).
   - Lam_props: by induction on m, for Lam(x) = sum_i ell (mu i) (nu i) x_i,
     gprod m nu has density exp(-Lam) with respect to gprod m mu, Lam is
     integrable and its mean is sum_i c (mu i) (nu i).
   - Channel (paper App. C): given J* = j the n coordinates are independent,
     W_j ~ G (ln L), W_i ~ G (ln l) for i <> j (chan j); with
     E_{G mu}[ell mu nu] = (mu - nu)^2 / (2 sigma^2) (gauss_cost) the pairwise
     log-likelihood ratio has mean 2 (ln L - ln l)^2 / (2 sigma^2)
     = (ln kappa)^2 / sigma^2, kappa = L / l (chan_llr_mean), so
     prop2_meas_tight (MeasObs.v) gives prop2_gaussian_generic:
     I(J*; W) <= (1 - 1/n) (log2 kappa)^2 ln 2 / sigma^2 bits, and
     prop2_gaussian_generic_loose: <= (log2 kappa)^2 ln 2 / sigma^2.
     Only 0 < l and 0 < L are used (not l <= L).
   - GaussianChannel: the instance G := gauss sigma, ell := gauss_llr sigma
     (GaussMeasure.v): gauss_chan (the n-dimensional Gaussian law of W given
     J* = j), gauss_chan_indep, gauss_chan_marginal, and prop2_gaussian / prop2_gaussian_loose,
     Proposition 2 with premises 0 < sigma, 0 < n, 0 < l, 0 < L only.
   Uses mathcomp-analysis 0.6.0 over Coq's reals (Rstruct). *)

From Coq Require Import Reals Lra.
From mathcomp Require Import all_ssreflect all_algebra finmap.
From mathcomp Require Import boolp classical_sets functions cardinality mathcomp_extra.
From mathcomp Require Import reals ereal signed topology normedtype sequences esum measure lebesgue_measure lebesgue_integral numfun Rstruct.
From VistaLab Require Import Entropy GeneralObs Prop2 MeasObs Density GaussMeasure.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.
Import Order.TTheory GRing.Theory Num.Theory.

Local Open Scope classical_set_scope.
Local Open Scope ring_scope.

Lemma prob_sigma_finite d (T : measurableType d)
  (P : {measure set T -> \bar real_realType}) : P setT = 1%E -> sigma_finite setT P.
Proof.
move=> P1; exists (fun _ => setT).
  by apply/seteqP; split => [x _|x _ //]; exists 0%N.
by move=> _; split; [exact: measurableT | rewrite P1 ltry].
Qed.

Section Marginals.
Local Open Scope ereal_scope.
Context d1 d2 (T1 : measurableType d1) (T2 : measurableType d2).
Variables (P1 : {measure set T1 -> \bar real_realType}) (P2 : {measure set T2 -> \bar real_realType}).
Hypotheses (P11 : P1 setT = 1) (P21 : P2 setT = 1).
Let sP1 := prob_sigma_finite P11.
Let sP2 := prob_sigma_finite P21.
Let P := product_measure1 P1 sP2.

Lemma measurable_fst : measurable_fun setT (@fst T1 T2).
Proof. exact: ((prod_measurable_funP (@id (T1 * T2))).1 (@measurable_fun_id _ _ setT)).1. Qed.

Lemma measurable_snd : measurable_fun setT (@snd T1 T2).
Proof. exact: ((prod_measurable_funP (@id (T1 * T2))).1 (@measurable_fun_id _ _ setT)).2. Qed.

Lemma ge0_integral_fst (f : T1 -> \bar real_realType) :
  measurable_fun setT f -> (forall x, 0 <= f x) ->
  \int[P]_z f z.1 = \int[P1]_x f x.
Proof using P11 P21.
move=> mf f0.
rewrite (fubini_tonelli1 sP2 (fun z => f z.1)) //; last first.
  exact: measurable_fun_comp mf measurable_fst.
apply: eq_integral => x _; rewrite /fubini_F.
by rewrite (integral_cst P2 measurableT (f x)) P21 mule1.
Qed.

Lemma ge0_integral_snd (f : T2 -> \bar real_realType) :
  measurable_fun setT f -> (forall x, 0 <= f x) ->
  \int[P]_z f z.2 = \int[P2]_x f x.
Proof using P11 P21.
move=> mf f0.
rewrite (fubini_tonelli2 sP1 sP2 (fun z => f z.2)) //; last first.
  exact: measurable_fun_comp mf measurable_snd.
apply: eq_integral => x _; rewrite /fubini_G.
by rewrite (integral_cst P1 measurableT (f x)) P11 mule1.
Qed.

Lemma integral_fst (f : T1 -> \bar real_realType) :
  measurable_fun setT f -> \int[P]_z f z.1 = \int[P1]_x f x.
Proof using P11 P21.
move=> mf; rewrite [LHS]integralE [RHS]integralE.
rewrite -(ge0_integral_fst (f := f^\+)) //; last exact: emeasurable_fun_funepos.
by rewrite -(ge0_integral_fst (f := f^\-)) //; exact: emeasurable_fun_funeneg.
Qed.

Lemma integral_snd (f : T2 -> \bar real_realType) :
  measurable_fun setT f -> \int[P]_z f z.2 = \int[P2]_x f x.
Proof using P11 P21.
move=> mf; rewrite [LHS]integralE [RHS]integralE.
rewrite -(ge0_integral_snd (f := f^\+)) //; last exact: emeasurable_fun_funepos.
by rewrite -(ge0_integral_snd (f := f^\-)) //; exact: emeasurable_fun_funeneg.
Qed.

Lemma integrable_fst (f : T1 -> \bar real_realType) :
  P1.-integrable setT f -> P.-integrable setT (fun z => f z.1).
Proof using P11 P21.
move=> [mf fi]; split; first exact: measurable_fun_comp mf measurable_fst.
have := ge0_integral_fst (f := abse \o f).
rewrite /= => ->; [exact: fi | | by move=> x; exact: abse_ge0].
exact: measurable_fun_comp (@measurable_fun_abse _ setT) mf.
Qed.

Lemma integrable_snd (f : T2 -> \bar real_realType) :
  P2.-integrable setT f -> P.-integrable setT (fun z => f z.2).
Proof using P11 P21.
move=> [mf fi]; split; first exact: measurable_fun_comp mf measurable_snd.
have := ge0_integral_snd (f := abse \o f).
rewrite /= => ->; [exact: fi | | by move=> x; exact: abse_ge0].
exact: measurable_fun_comp (@measurable_fun_abse _ setT) mf.
Qed.

End Marginals.

Lemma exp_negD (a b : R) : exp (- (Rplus a b)) = Rmult (exp (- a)) (exp (- b)).
Proof. by rewrite -exp_plus; congr exp; exact: Ropp_plus_distr. Qed.

Section TwoFactor.
Local Open Scope ereal_scope.
Context d1 d2 (T1 : measurableType d1) (T2 : measurableType d2).
Variables (P1 Q1 : {measure set T1 -> \bar real_realType})
  (P2 Q2 : {measure set T2 -> \bar real_realType}).
Hypotheses (P11 : P1 setT = 1) (Q11 : Q1 setT = 1) (P21 : P2 setT = 1) (Q21 : Q2 setT = 1).
Variables (L1 : T1 -> R) (L2 : T2 -> R).
Hypotheses (iL1 : P1.-integrable setT (EFin \o L1)) (iL2 : P2.-integrable setT (EFin \o L2)).
Hypotheses (mE1 : measurable_fun setT (fun x => exp (- L1 x) : real_realType))
  (mE2 : measurable_fun setT (fun x => exp (- L2 x) : real_realType)).
Hypotheses (dQ1 : forall A, measurable A -> Q1 A = \int[P1]_(x in A) (exp (- L1 x))%:E)
  (dQ2 : forall A, measurable A -> Q2 A = \int[P2]_(x in A) (exp (- L2 x))%:E).

Let sP1 := prob_sigma_finite P11.
Let sP2 := prob_sigma_finite P21.
Let sQ1 := prob_sigma_finite Q11.
Let sQ2 := prob_sigma_finite Q21.
Let P := product_measure1 P1 sP2.
Let Q := product_measure1 Q1 sQ2.

Definition Lsum (z : T1 * T2) : R := Rplus (L1 z.1) (L2 z.2).

Lemma Lsum_exp z : exp (- Lsum z) = Rmult (exp (- L1 z.1)) (exp (- L2 z.2)).
Proof. exact: exp_negD. Qed.

Lemma Lsum_meas : measurable_fun setT (fun z => exp (- Lsum z) : real_realType).
Proof.
rewrite (_ : (fun z => _) = ((fun z : T1 * T2 => exp (- L1 z.1) : real_realType)
   \* (fun z : T1 * T2 => exp (- L2 z.2) : real_realType))%R).
  apply: measurable_funM.
    exact: measurable_fun_comp mE1 (@measurable_fst _ _ T1 T2).
  exact: measurable_fun_comp mE2 (@measurable_snd _ _ T1 T2).
by apply/funext => z; rewrite Lsum_exp.
Qed.

Lemma Lsum_int : P.-integrable setT (EFin \o Lsum).
Proof.
apply: (eq_integrable _ (fun z => (L1 z.1)%:E + (L2 z.2)%:E)) => //.
apply: integrableD => //.
  exact: (integrable_fst P11 P21 iL1).
exact: (integrable_snd P11 P21 iL2).
Qed.

Lemma Lsum_mean :
  \int[P]_z (Lsum z)%:E = \int[P1]_x (L1 x)%:E + \int[P2]_y (L2 y)%:E.
Proof.
rewrite (eq_integral (fun z => (L1 z.1)%:E + (L2 z.2)%:E)) //.
rewrite integralD //.
- rewrite (integral_fst P11 P21 (f := EFin \o L1)); last by case: iL1.
  by rewrite (integral_snd P11 P21 (f := EFin \o L2)) //; case: iL2.
- exact: (integrable_fst P11 P21 iL1).
- exact: (integrable_snd P11 P21 iL2).
Qed.

Lemma factor_int d (T : measurableType d) (M N : {measure set T -> \bar real_realType})
  (Lf : T -> R) (A : set T) :
  measurable A -> measurable_fun setT (fun x => exp (- Lf x) : real_realType) ->
  (forall A, measurable A -> N A = \int[M]_(x in A) (exp (- Lf x))%:E) ->
  \int[M]_x (exp (- Lf x) * \1_A x)%:E = N A.
Proof.
move=> mA mf dN; rewrite dN // -[in RHS](setTI A) integral_setI_indic //.
Qed.

Section Rect.
Variable D : {measure set (T1 * T2)%type -> \bar real_realType}.
Hypothesis DE : forall A, measurable A -> D A = \int[P]_(z in A) (exp (- Lsum z))%:E.

Lemma D_rect (A1 : set T1) (A2 : set T2) : measurable A1 -> measurable A2 ->
  D (A1 `*` A2) = Q1 A1 * Q2 A2.
Proof.
move=> mA1 mA2.
pose h1 := ((fun x => exp (- L1 x) : real_realType) \* \1_A1)%R.
pose h2 := ((fun y => exp (- L2 y) : real_realType) \* \1_A2)%R.
have mh1 : measurable_fun setT h1.
  by apply: measurable_funM => //; exact: measurable_fun_indic.
have mh2 : measurable_fun setT h2.
  by apply: measurable_funM => //; exact: measurable_fun_indic.
have h10 x : 0 <= (h1 x)%:E.
  by rewrite lee_fin; apply: mulr_ge0 => //; apply/RleP; left; exact: exp_pos.
have h20 y : 0 <= (h2 y)%:E.
  by rewrite lee_fin; apply: mulr_ge0 => //; apply/RleP; left; exact: exp_pos.
have mA : measurable (A1 `*` A2) by exact: measurableM.
rewrite DE // -[in LHS](setTI (A1 `*` A2)) integral_setI_indic //.
rewrite (eq_integral (fun z => (h1 z.1)%:E * (h2 z.2)%:E)); last first.
  move=> z _; rewrite Lsum_exp -!EFinM; congr (_%:E).
  rewrite /h1 /h2; case: z => x y /=; rewrite !indicE.
  have -> : ((x, y) \in A1 `*` A2) = (x \in A1) && (y \in A2).
    by apply/idP/andP; rewrite !inE => -[].
  by case: (x \in A1); case: (y \in A2); rewrite /= ?mulr1 ?mulr0 ?mul0r ?mulr0.
rewrite (fubini_tonelli1 sP2 (fun z => (h1 z.1)%:E * (h2 z.2)%:E)) //; last 2 first.
- apply/EFin_measurable_fun; rewrite (_ : (fun _ => _) = ((h1 \o fst) \* (h2 \o snd))%R) //.
    apply: measurable_funM.
      exact: measurable_fun_comp mh1 (@measurable_fst _ _ T1 T2).
    exact: measurable_fun_comp mh2 (@measurable_snd _ _ T1 T2).
- by move=> z; apply: mule_ge0.
rewrite /fubini_F /=.
rewrite (eq_integral (fun x => (h1 x)%:E * \int[P2]_y (h2 y)%:E)); last first.
  move=> x _; rewrite ge0_integralM //.
  exact/EFin_measurable_fun.
rewrite (eq_integral (fun x => (\int[P2]_y (h2 y)%:E) * (h1 x)%:E)); last first.
  by move=> x _; rewrite muleC.
rewrite ge0_integralM //; last 2 first.
- exact/EFin_measurable_fun.
- by apply: integral_ge0 => y _.
rewrite muleC; congr (_ * _).
- exact: (factor_int mA1 mE1 dQ1).
- exact: (factor_int mA2 mE2 dQ2).
Qed.

Lemma Lsum_dens_gen A : measurable A -> Q A = \int[P]_(z in A) (exp (- Lsum z))%:E.
Proof.
move=> mA; rewrite -DE //.
apply: (product_measure_unique sQ1 sQ2 (m' := D)) => // A1 A2 mA1 mA2.
exact: D_rect.
Qed.
End Rect.

Lemma Lsum_exp_ge0 z : (0 <= exp (- Lsum z))%R.
Proof. by apply/RleP; left; exact: exp_pos. Qed.

Lemma Lsum_dens A : measurable A -> Q A = \int[P]_(z in A) (exp (- Lsum z))%:E.
Proof.
apply: (Lsum_dens_gen (D := density_meas P Lsum_meas Lsum_exp_ge0)).
by [].
Qed.

End TwoFactor.

Section Rn.
Context d0 (T0 : measurableType d0).

Fixpoint RnT (m : nat) : {d : measure_display & measurableType d} :=
  match m with
  | 0 => existT _ _ T0
  | m'.+1 => existT _ _ [the measurableType _ of (projT2 (RnT m') * T0)%type]
  end.
Definition Rn m : measurableType (projT1 (RnT m)) := projT2 (RnT m).

Fixpoint coordn (m : nat) : nat -> Rn m -> T0 :=
  match m return nat -> Rn m -> T0 with
  | 0 => fun _ x => x
  | m'.+1 => fun i x => if i == m'.+1 then x.2 else @coordn m' i x.1
  end.
Arguments coordn : clear implicits.

Definition coord m (i : 'I_m.+1) : Rn m -> T0 := coordn m i.

Lemma measurable_coordn m i : measurable_fun setT (coordn m i).
Proof.
elim: m => [|m IH] /=; first exact: measurable_fun_id.
case: (i == m.+1); first exact: (@measurable_snd _ _ (Rn m) T0).
exact: measurable_fun_comp IH (@measurable_fst _ _ (Rn m) T0).
Qed.

Lemma measurable_coord m (i : 'I_m.+1) : measurable_fun setT (coord i).
Proof. exact: measurable_coordn. Qed.

Lemma coordn_lt m i (x : Rn m.+1) : (i < m.+1)%N -> coordn m.+1 i x = coordn m i x.1.
Proof. by move=> im /=; rewrite ltn_eqF. Qed.

Lemma coordn_last m (x : Rn m.+1) : coordn m.+1 m.+1 x = x.2.
Proof. by rewrite /= eqxx. Qed.

Lemma measurable_rect m (A : nat -> set T0) : (forall i, measurable (A i)) ->
  measurable (\bigcap_(i < m.+1) coordn m i @^-1` A i).
Proof.
move=> mA; apply: bigcap_measurable => k _.
by rewrite -[X in measurable X]setTI; exact: measurable_coordn.
Qed.

Lemma rectS m (A : nat -> set T0) :
  \bigcap_(i < m.+2) coordn m.+1 i @^-1` A i
  = (\bigcap_(i < m.+1) coordn m i @^-1` A i) `*` A m.+1.
Proof.
apply/seteqP; split => [x Ax | x [Ax1 Ax2] i /= im].
  split; last by have := Ax m.+1 (ltnSn _); rewrite /preimage /= eqxx.
  by move=> i /= im; have := Ax i (ltnW im); rewrite /preimage /= ltn_eqF.
rewrite /preimage /=; case: ifPn => [/eqP -> //|ne].
by apply: Ax1; rewrite /= ltnS leq_eqVlt (negbTE ne) in im.
Qed.

Section Family.
Variable G : R -> {measure set T0 -> \bar real_realType}.
Hypothesis G1 : forall mu, G mu setT = 1%E.

Fixpoint gprod (m : nat) : forall (mu : nat -> R), {measure set Rn m -> \bar real_realType} :=
  match m return forall mu : nat -> R, {measure set Rn m -> \bar real_realType} with
  | 0 => fun mu => G (mu 0%N)
  | m'.+1 => fun mu => [the measure _ _ of
      product_measure1 (@gprod m' mu) (prob_sigma_finite (G1 (mu m'.+1)))]
  end.

Lemma gprod_prob m mu : gprod m mu setT = 1%E.
Proof.
elim: m mu => [|m IH] mu /=; first exact: G1.
rewrite -setMTT product_measure1E // G1 mule1; exact: IH.
Qed.

Lemma gprod_indep m mu (A : nat -> set T0) : (forall i, measurable (A i)) ->
  gprod m mu (\bigcap_(i < m.+1) coordn m i @^-1` A i)
  = \big[*%E/1%E]_(i < m.+1) G (mu i) (A i).
Proof.
move=> mA; elim: m mu => [|m IH] mu.
  rewrite big_ord1 /=; congr (G _ _); apply/seteqP; split => [x /(_ 0%N) | x Ax i].
    by apply.
  by rewrite /= ltnS leqn0 => /eqP ->.
rewrite rectS /= product_measure1E //; last exact: measurable_rect.
by rewrite big_ord_recr /=; congr (_ * _)%E; exact: IH.
Qed.

Variable ell : R -> R -> T0 -> R.
Variable c : R -> R -> R.
Hypotheses
  (Gch : forall mu nu A, measurable A ->
     (G nu A = \int[G mu]_(x in A) (exp (- ell mu nu x))%:E)%E)
  (Gint : forall mu nu, (G mu).-integrable setT (EFin \o ell mu nu))
  (Gmeas : forall mu nu, measurable_fun setT (fun x => exp (- ell mu nu x) : real_realType))
  (Gmean : forall mu nu, (\int[G mu]_x (ell mu nu x)%:E = (c mu nu)%:E)%E).

Definition Lam m (mu nu : nat -> R) (x : Rn m) : R :=
  \sum_(i < m.+1) ell (mu i) (nu i) (coordn m i x).
Arguments Lam : clear implicits.

Lemma LamS m mu nu : Lam m.+1 mu nu = Lsum (Lam m mu nu) (ell (mu m.+1) (nu m.+1)).
Proof.
apply/funext => x; rewrite /Lam /Lsum big_ord_recr /= eqxx RplusE; congr (_ + _).
by apply: eq_bigr => i _; rewrite ltn_eqF.
Qed.

Lemma Lam0 mu nu : Lam 0 mu nu = ell (mu 0%N) (nu 0%N).
Proof. by apply/funext => x; rewrite /Lam big_ord1. Qed.

Lemma Lam_props m mu nu : ([/\ (gprod m mu).-integrable setT (EFin \o Lam m mu nu),
      measurable_fun setT (fun x => exp (- Lam m mu nu x) : real_realType),
      (forall A, measurable A ->
         gprod m nu A = \int[gprod m mu]_(x in A) (exp (- Lam m mu nu x))%:E) &
      \int[gprod m mu]_x (Lam m mu nu x)%:E = (\sum_(i < m.+1) c (mu i) (nu i))%:E])%E.
Proof.
elim: m => [|m [IHa IHb IHc IHd]].
  rewrite Lam0 big_ord1; split; [exact: Gint | exact: Gmeas | exact: Gch | exact: Gmean].
rewrite LamS big_ord_recr EFinD; split.
- exact: (Lsum_int (gprod_prob m mu) (G1 _) IHa (Gint _ _)).
- exact: (Lsum_meas IHb (Gmeas _ _)).
- exact: (Lsum_dens (gprod_prob m nu) (G1 _) (G1 _) IHb (Gmeas _ _) IHc (Gch _ _)).
- by rewrite (Lsum_mean (gprod_prob m mu) (G1 _) IHa (Gint _ _)) IHd Gmean.
Qed.

End Family.
End Rn.

Section Marginal.
Context d0 (T0 : measurableType d0).
Variable G : R -> {measure set T0 -> \bar real_realType}.
Hypothesis G1 : forall mu, G mu setT = 1%E.

(* Coordinate i of gprod m mu has law G (mu i). *)
Lemma gprod_marginal m mu i (B : set T0) : (i <= m)%N -> measurable B ->
  gprod G1 m mu (@coordn _ _ m i @^-1` B) = G (mu i) B.
Proof.
move=> im mB; pose A k := if k == i then B else setT.
have mA k : measurable (A k) by rewrite /A; case: ifP.
have -> : @coordn _ _ m i @^-1` B = \bigcap_(k < m.+1) @coordn _ _ m k @^-1` A k.
  apply/seteqP; split => [x Bx k _ | x Ax].
    by rewrite /A /preimage /=; case: eqP => [->|].
  by have := Ax i im; rewrite /A /preimage /= eqxx.
rewrite gprod_indep // (bigD1 (Ordinal (im : (i < m.+1)%N))) //= /A eqxx big1 ?mule1 //.
move=> k ne; have -> : (k == i :> nat) = false.
  by apply/negbTE; apply: contra ne => /eqP e; apply/eqP/val_inj.
exact: G1.
Qed.

End Marginal.

Definition gauss_cost (sigma a b : R) : R :=
  Rdiv (Rmult (Rminus a b) (Rminus a b)) (Rmult 2 (Rmult sigma sigma)).

(* The same cost in ring notation (as GaussMeasure.v states the mean). *)
Lemma gauss_costE (sigma a b : R) : sigma != 0 ->
  gauss_cost sigma a b = (a - b) * (a - b) / (2 * (sigma * sigma)).
Proof.
move=> s0; rewrite /gauss_cost RdivE //.
apply/negP => /eqP h; move/eqP: s0; apply.
change (Rmult 2 (Rmult sigma sigma) = IZR 0) in h.
change (sigma = IZR 0); nra.
Qed.

Section Channel.
Context d0 (T0 : measurableType d0).
Variable G : R -> {measure set T0 -> \bar real_realType}.
Hypothesis G1 : forall mu, G mu setT = 1%E.
Variables (ell : R -> R -> T0 -> R) (sigma : R).
Hypotheses
  (Gch : forall mu nu A, measurable A ->
     (G nu A = \int[G mu]_(x in A) (exp (- ell mu nu x))%:E)%E)
  (Gint : forall mu nu, (G mu).-integrable setT (EFin \o ell mu nu))
  (Gmeas : forall mu nu, measurable_fun setT (fun x => exp (- ell mu nu x) : real_realType))
  (Gmean : forall mu nu, (\int[G mu]_x (ell mu nu x)%:E = (gauss_cost sigma mu nu)%:E)%E).
Hypothesis s0 : Rlt 0 sigma.
Variables (n : nat) (L l : R).
Hypotheses (n0 : (0 < n)%N) (l0 : Rlt 0 l) (L0 : Rlt 0 L).

(* Given J* = j: W_j ~ G (ln L), W_i ~ G (ln l) for i <> j, independent. *)
Definition chan_means (j : 'I_n) (i : nat) : R := if i == j then ln L else ln l.
Definition chan (j : 'I_n) := gprod G1 n.-1 (chan_means j).
Definition chan_llr (j k : 'I_n) := @Lam _ _ ell n.-1 (chan_means j) (chan_means k).

Lemma chan_prob j : chan j setT = 1%E.
Proof. exact: gprod_prob. Qed.

Let props j k := Lam_props G1 Gch Gint Gmeas Gmean n.-1 (chan_means j) (chan_means k).

Lemma chan_llr_integrable j k : (chan j).-integrable setT (EFin \o chan_llr j k).
Proof. by case: (props j k). Qed.

Lemma chan_llr_measurable j k :
  measurable_fun setT (fun x => exp (- chan_llr j k x) : real_realType).
Proof. by case: (props j k). Qed.

Lemma chan_change j k A : measurable A ->
  (chan k A = \int[chan j]_(x in A) (exp (- chan_llr j k x))%:E)%E.
Proof. by case: (props j k) => _ _ h _; exact: h. Qed.

Lemma chan_llr_mean j k : j != k ->
  fine (\int[chan j]_x (chan_llr j k x)%:E)%E
  = Rdiv (pow (ln (Rdiv L l)) 2) (pow sigma 2).
Proof.
move=> ne; case: (props j k) => _ _ _ ->; rewrite /=.
set a := gauss_cost sigma (ln L) (ln l).
have nn : n.-1.+1 = n by rewrite prednK.
have e i : gauss_cost sigma (chan_means j i) (chan_means k i)
         = (if i == j then a else 0) + (if i == k then a else 0).
  rewrite /chan_means /a /gauss_cost.
  have [->|nj] := eqVneq i j.
    have -> : (j == k :> nat) = false by apply/negbTE; rewrite eqE /= in ne.
    by rewrite addr0.
  rewrite add0r; case: eqP => _; last first.
    by rewrite Rminus_diag_eq // Rmult_0_l /Rdiv Rmult_0_l.
  by congr Rdiv; ring.
under eq_bigr do rewrite e.
have jN : (j < n.-1.+1)%N by rewrite nn ltn_ord.
have kN : (k < n.-1.+1)%N by rewrite nn ltn_ord.
rewrite big_split /= -!big_mkcond /= (big_pred1 (Ordinal jN)) // (big_pred1 (Ordinal kN)) //.
rewrite ln_div' //.
have s2 : sigma <> IZR 0 by apply: Rgt_not_eq; exact: s0.
change (Rplus a a = Rdiv (pow (Rminus (ln L) (ln l)) 2) (pow sigma 2)).
by rewrite /a /gauss_cost; field.
Qed.

(* Proposition 2 (App. C) for the channel built from G: no premise on
   divergences; the bound is (1 - 1/n) (log2 kappa)^2 ln 2 / sigma^2 bits. *)
Theorem prop2_gaussian_generic :
  Rle (MIobs (meas_obs chan_prob n0))
      (Rmult (Rminus 1 (Rinv (INR n)))
             (Rmult (Rdiv (pow (log2 (Rdiv L l)) 2) (pow sigma 2)) (ln 2))).
Proof.
apply: (prop2_meas_tight chan_prob n0 chan_llr_integrable chan_llr_measurable chan_change s0).
move=> j k ne; rewrite chan_llr_mean; first exact: Rle_refl.
by apply/eqP.
Qed.

(* The paper's form: I(J*; W) <= (log2 kappa)^2 ln 2 / sigma^2 bits. *)
Corollary prop2_gaussian_generic_loose :
  Rle (MIobs (meas_obs chan_prob n0))
      (Rmult (Rdiv (pow (log2 (Rdiv L l)) 2) (pow sigma 2)) (ln 2)).
Proof.
apply: Rle_trans prop2_gaussian_generic _.
set b := Rmult (Rdiv _ _) _.
have b0 : Rle (IZR 0) b.
  apply: Rmult_le_pos; last by left; exact: ln2_pos.
  apply: Rmult_le_pos; first exact: pow2_ge_0.
  by left; apply: Rinv_0_lt_compat; apply: pow_lt; exact: s0.
have nR : Rlt (IZR 0) (Rinv (INR n)).
  by apply: Rinv_0_lt_compat; apply: lt_0_INR; apply/ssrnat.ltP.
rewrite -[X in Rle _ X]Rmult_1_l; apply: Rmult_le_compat_r => //.
rewrite /Rminus; rewrite -[X in Rle _ X]Rplus_0_r; apply: Rplus_le_compat_l.
by left; apply: Ropp_lt_gt_0_contravar.
Qed.

End Channel.

Local Notation gR := [the measurableType _ of salgebraType (@ocitv real_realType)].

Section GaussianChannel.
Variable sigma : R.
Hypothesis s0 : 0 < sigma.
Variables (n : nat) (L l : R).
Hypotheses (n0 : (0 < n)%N) (l0 : 0 < l) (L0 : 0 < L).

(* The paper's observation law given J* = j: W_j ~ N(ln L, sigma^2),
   W_i ~ N(ln l, sigma^2) for i <> j, independent. *)
Definition gauss_chan (j : 'I_n) := chan (gauss_prob s0) L l j.

Definition gauss_chan_prob j : gauss_chan j setT = 1%E := chan_prob (gauss_prob s0) L l j.

(* Given J* = j, the coordinates are independent with laws N(m_i^(j), sigma^2). *)
Lemma gauss_chan_indep (j : 'I_n) (A : nat -> set gR) :
  (forall i, measurable (A i)) ->
  gauss_chan j (\bigcap_(i < n.-1.+1) @coordn _ gR n.-1 i @^-1` A i)
  = \big[*%E/1%E]_(i < n.-1.+1) gauss sigma (chan_means L l j i) (A i).
Proof. exact: gprod_indep. Qed.

(* Given J* = j, coordinate i (0 <= i < n) has law N(m_i^(j), sigma^2):
   m_j^(j) = ln L and m_i^(j) = ln l for i <> j. *)
Lemma gauss_chan_marginal (j : 'I_n) (i : nat) (B : set gR) : (i < n)%N -> measurable B ->
  gauss_chan j (@coordn _ gR n.-1 i @^-1` B)
  = gauss sigma (if i == j then ln L else ln l) B.
Proof.
move=> iN mB; apply: gprod_marginal => //.
by rewrite -ltnS prednK.
Qed.

(* Proposition 2 (paper App. C) for the Gaussian channel, with no premise
   on divergences: I(J*; W) <= (1 - 1/n) (log2 kappa)^2 ln 2 / sigma^2 bits,
   kappa = L / l. *)
Theorem prop2_gaussian :
  Rle (MIobs (meas_obs gauss_chan_prob n0))
      (Rmult (Rminus 1 (Rinv (INR n)))
             (Rmult (Rdiv (pow (log2 (Rdiv L l)) 2) (pow sigma 2)) (ln 2))).
Proof.
have s0R : Rlt 0 sigma by apply/RltP.
have l0R : Rlt 0 l by apply/RltP.
have L0R : Rlt 0 L by apply/RltP.
exact: (prop2_gaussian_generic (gauss_prob s0) (@gauss_change sigma)
  (gauss_llr_integrable s0) (@gauss_llr_measurable sigma) (gauss_llr_mean s0) s0R n0 l0R L0R).
Qed.

(* The paper's form: I(J*; W) <= (log2 kappa)^2 ln 2 / sigma^2 bits. *)
Corollary prop2_gaussian_loose :
  Rle (MIobs (meas_obs gauss_chan_prob n0))
      (Rmult (Rdiv (pow (log2 (Rdiv L l)) 2) (pow sigma 2)) (ln 2)).
Proof.
have s0R : Rlt 0 sigma by apply/RltP.
have l0R : Rlt 0 l by apply/RltP.
have L0R : Rlt 0 L by apply/RltP.
exact: (prop2_gaussian_generic_loose (gauss_prob s0) (@gauss_change sigma)
  (gauss_llr_integrable s0) (@gauss_llr_measurable sigma) (gauss_llr_mean s0) s0R n0 l0R L0R).
Qed.

End GaussianChannel.
