(* Observations in a measurable space, and Proposition 2 for every channel
   whose pairwise likelihood ratios are known (App. C, Steps 1-3).

   Uses mathcomp-analysis 0.6.0 (measures, the Lebesgue integral) over Coq's
   real numbers (Rstruct).  Contents:
   - meas_obs: an observation W with values in a measurable space X, law P_j
     (a probability measure) given J* = j, J* uniform on [n].  Its admissible
     quantisations are the finite maps q with measurable fibres, and the law
     of (J*, q(W)) is (1/n) P_j(q^-1 t); I(J*; W) = MIobs (meas_obs ..) is the
     supremum of I(J*; q(W)) over them (GeneralObs.v).
   - kl_quantised_le (data processing): if Q has density exp(-L) with respect
     to P (Q(A) = int_A exp(-L) dP for every measurable A) and L is
     P-integrable, then every finite measurable quantisation q has
     KL(q#P || q#Q) <= E_P[L].  Proof: on a cell A with P(A) > 0 and
     m = -int_A L dP / P(A), the tangent exp y >= exp m (1 + y - m) integrated
     over A gives Q(A) >= P(A) exp m (Jensen), i.e.
     P(A) ln(P(A)/Q(A)) <= int_A L dP; sum over the cells.
   - prop2_meas_tight: if every pair j <> k has dP_k/dP_j = exp(-L_jk) with
     E_{P_j}[L_jk] <= (ln kappa)^2 / sigma^2, then
     I(J*; W) <= (1 - 1/n) (log2 kappa)^2 ln 2 / sigma^2.
   For the paper's Gaussian channel L_jk(w) = ln kappa (w_j - w_k) / sigma^2
   and E_{P_j}[L_jk] = (ln kappa)^2 / sigma^2; here these are premises.
   GaussN.v builds the n-dimensional Gaussian laws and proves them
   (prop2_gaussian). *)

From Coq Require Import Reals Lra.
From mathcomp Require Import all_ssreflect all_algebra finmap.
From mathcomp Require Import boolp classical_sets functions cardinality mathcomp_extra.
From mathcomp Require Import reals ereal signed topology normedtype sequences esum measure lebesgue_measure lebesgue_integral numfun Rstruct.
From VistaLab Require Import Entropy GeneralObs Prop2.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.
Import Order.TTheory GRing.Theory Num.Theory.

Local Open Scope classical_set_scope.
Local Open Scope ring_scope.

Section Arith.
Local Open Scope R_scope.

Lemma le_0_sub (a b : R) : a <= b -> 0 <= b - a.
Proof. lra. Qed.

(* The tangent line of exp at m lies below it. *)
Lemma exp_tangent (m y : R) : exp m * (1 + (y - m)) <= exp y.
Proof.
have -> : exp y = exp m * exp (y - m) by rewrite -exp_plus; congr exp; ring.
apply: Rmult_le_compat_l; [left; exact: exp_pos | exact: exp_ineq1_le].
Qed.

(* One cell of the partition: P(A) ln(P(A)/Q(A)) <= int_A L dP once
   Q(A) >= P(A) exp(-int_A L dP / P(A)). *)
Lemma cell_arith (p qa l : R) :
  0 < p -> exp (- l / p) * p <= qa -> p * ln (p / qa) <= l.
Proof.
move=> p0 h.
have e0 := exp_pos (- l / p).
have qa0 : 0 < qa by nra.
rewrite ln_div' //.
have : ln (exp (- l / p) * p) <= ln qa.
  case: (Req_dec (exp (- l / p) * p) qa) => [->|ne]; first lra.
  by left; apply: ln_increasing; nra.
rewrite ln_mult // ln_exp => h2.
have -> : l = p * (- (- l / p)) by field; lra.
apply: Rmult_le_compat_l; lra.
Qed.
End Arith.

Section Prob.
Context d (X : measurableType d).
Variables (P : {measure set X -> \bar real_realType}).
Hypothesis P1 : P setT = 1%E.

Lemma P_fin (A : set X) : measurable A -> P A = (fine (P A))%:E.
Proof.
move=> mA; rewrite fineK // ge0_fin_numE //.
apply: (@le_lt_trans _ _ (P setT)); last by rewrite P1 ltry.
by apply: le_measure; rewrite ?inE //; exact: measurableT.
Qed.

Lemma P_le1 (A : set X) : measurable A -> (fine (P A) <= 1)%R.
Proof.
move=> mA; rewrite -lee_fin -P_fin // -P1.
by apply: le_measure; rewrite ?inE //; exact: measurableT.
Qed.

Lemma P_ge0 (A : set X) : (0 <= fine (P A))%R.
Proof. by apply: fine_ge0. Qed.


Lemma integrable_sum (I : Type) (s : seq I) (g : I -> X -> R) (D : set X) :
  measurable D -> (forall i, P.-integrable D (EFin \o g i)) ->
  P.-integrable D (fun x => (\sum_(i <- s) g i x)%:E).
Proof.
move=> mD ig; elim: s => [|i s IH].
  by under eq_fun do rewrite big_nil; exact: integrable0.
under eq_fun do rewrite big_cons EFinD.
exact: (integrableD mD (ig i) IH).
Qed.

Lemma integral_sum_fine (I : Type) (s : seq I) (g : I -> X -> R) (D : set X) :
  measurable D -> (forall i, P.-integrable D (EFin \o g i)) ->
  fine (\int[P]_(x in D) (\sum_(i <- s) g i x)%:E)
    = \sum_(i <- s) fine (\int[P]_(x in D) (g i x)%:E).
Proof.
move=> mD ig; elim: s => [|i s IH].
  rewrite big_nil; under eq_integral do rewrite big_nil.
  by rewrite integral0.
rewrite big_cons -IH; under eq_integral do rewrite big_cons EFinD.
rewrite (integralD mD (ig i) (integrable_sum s mD ig)) fineD //.
  exact: (integral_fune_fin_num mD (ig i)).
exact: (integral_fune_fin_num mD (integrable_sum s mD ig)).
Qed.

(* The integral of f over X splits over the fibres of a finite measurable map. *)
Lemma integral_fibres (U : finType) (q : X -> U) (f : X -> R) :
  (forall t, measurable (q @^-1` [set t])) -> P.-integrable setT (EFin \o f) ->
  \sum_(t : U) fine (\int[P]_(x in q @^-1` [set t]) (f x)%:E)
    = fine (\int[P]_x (f x)%:E).
Proof.
move=> mq fi.
have e t : (\int[P]_(x in q @^-1` [set t]) (f x)%:E
         = \int[P]_x ((f x * \1_(q @^-1` [set t]) x)%R%:E))%E.
  transitivity (\int[P]_(x in setT `&` q @^-1` [set t]) (f x)%:E)%E; first by rewrite setTI.
  by rewrite integral_setI_indic //; apply: eq_integral => x _; rewrite EFinM.
have ig : forall t, P.-integrable setT (EFin \o (fun x => (f x * \1_(q @^-1` [set t]) x)%R)).
  move=> t; have := (integrable_mkcond _ (mq t)).1 (integrableS measurableT (mq t) (@subsetT _ _) fi).
  apply: eq_integrable => // x _; rewrite /= /restrict /patch indicE.
  by case: ifPn => _; rewrite ?mulr1 ?mulr0.
under eq_bigr do rewrite e.
rewrite -(integral_sum_fine _ measurableT ig); congr (fine _).
apply: eq_integral => x _; congr (_%:E).
rewrite (bigD1 (q x)) //= big1 ?addr0.
  by rewrite indicE mem_set ?mulr1.
by move=> t /negbTE tq; rewrite indicE memNset ?mulr0 //= => e'; move: tq; rewrite e' eqxx.
Qed.
End Prob.

Section DataProcessing.
Context d (X : measurableType d).
Variables (P Q : {measure set X -> \bar real_realType}) (L : X -> R).
Hypotheses (P1 : P setT = 1%E) (Q1 : Q setT = 1%E).
Hypothesis iL : P.-integrable setT (EFin \o L).
Hypothesis mE : measurable_fun setT ((fun x => exp (- L x)) : X -> real_realType).
Hypothesis dQ : forall A, measurable A -> Q A = (\int[P]_(x in A) (exp (- L x))%:E)%E.

Lemma integrable_cst_fin (A : set X) (c : R) : measurable A ->
  P.-integrable A (EFin \o (fun _ => c)).
Proof.
move=> mA; split.
  exact: (measurable_fun_cst (c%:E : \bar real_realType)).
rewrite /= integral_cst // (P_fin P1 mA) -EFinM ltry //.
Qed.

Lemma cell_lower (A : set X) : measurable A -> Rlt 0 (fine (P A)) ->
  let l := fine (\int[P]_(x in A) (L x)%:E)%E in
  Rle (Rmult (exp (Rdiv (Ropp l) (fine (P A)))) (fine (P A))) (fine (Q A)).
Proof.
move=> mA p0 l.
set p := fine (P A) in p0 *.
have PA : P A = p%:E := P_fin P1 mA.
have iLA : P.-integrable A (EFin \o L) := integrableS measurableT mA (@subsetT _ A) iL.
have lA : (\int[P]_(x in A) (L x)%:E)%E = l%:E.
  by rewrite fineK //; exact: (integral_fune_fin_num mA iLA).
have QA : Q A = (fine (Q A))%:E := P_fin Q1 mA.
have mEA : measurable_fun A (fun x => (exp (- L x))%:E).
  apply: (measurable_funS measurableT (@subsetT _ A)).
  exact: (measurable_fun_comp (@measurable_fun_EFin _ setT) mE).
have iEA : P.-integrable A (fun x => (exp (- L x))%:E).
  split => //; rewrite (eq_integral (fun x => (exp (- L x))%:E)).
    by rewrite -dQ // QA ltry.
  by move=> x _; rewrite gee0_abs // lee_fin; apply/RlebP; left; exact: exp_pos.
set m := Rdiv (Ropp l) p; set e := exp m.
have iL2 : P.-integrable A (EFin \o (fun x => Rminus (Rmult e (Rminus 1 m)) (Rmult e (L x)))).
  apply: (eq_integrable _ (fun x => (Rmult e (Rminus 1 m))%:E - (e%:E * (L x)%:E))%E) => //.
  apply: (integrableB mA (integrable_cst_fin _ mA)).
  exact: (integrablerM mA e iLA).
have int2 : (\int[P]_(x in A) (Rminus (Rmult e (Rminus 1 m)) (Rmult e (L x)))%:E
            = (Rminus (Rmult (Rmult e (Rminus 1 m)) p) (Rmult e l))%:E)%E.
  rewrite (integralB_EFin mA (integrable_cst_fin _ mA) (integrablerM mA e iLA)).
  rewrite integral_cst // PA.
  under eq_integral do rewrite EFinM.
  rewrite (integralM mA iLA) /= lA -!EFinM -EFinB //.
have g0 : (0 <= \int[P]_(x in A)
             (Rminus (exp (- L x)) (Rminus (Rmult e (Rminus 1 m)) (Rmult e (L x))))%:E)%E.
  apply: integral_ge0 => x _; rewrite lee_fin; apply/RlebP; apply: le_0_sub.
  have -> : Rminus (Rmult e (Rminus 1 m)) (Rmult e (L x))
          = Rmult e (Rplus 1 (Rminus (Ropp (L x)) m)) by ring.
  exact: exp_tangent.
move: g0; rewrite (integralB_EFin mA iEA iL2) -dQ // QA int2 -EFinB lee_fin => /RlebP g0.
have g1 : Rle R0 (Rminus (fine (Q A)) (Rminus (Rmult (Rmult e (Rminus 1 m)) p) (Rmult e l))).
  exact: g0.
have eq : Rminus (Rmult (Rmult e (Rminus 1 m)) p) (Rmult e l) = Rmult e p.
  by rewrite /m; field; lra.
rewrite -/m -/e /=; rewrite eq in g1; lra.
Qed.

(* A cell of positive P-probability has positive Q-probability. *)
Lemma cell_pos (A : set X) : measurable A -> Rlt 0 (fine (P A)) -> Rlt 0 (fine (Q A)).
Proof.
move=> mA p0; have := cell_lower mA p0; cbv zeta.
have := exp_pos (Rdiv (Ropp (fine (\int[P]_(x in A) (L x)%:E)%E)) (fine (P A))); nra.
Qed.

Lemma cell_le (A : set X) : measurable A ->
  Rle (Rmult (fine (P A)) (ln (Rdiv (fine (P A)) (fine (Q A)))))
      (fine (\int[P]_(x in A) (L x)%:E)%E).
Proof.
move=> mA.
set p := fine (P A); set l := fine (\int[P]_(x in A) (L x)%:E)%E.
have PA : P A = p%:E := P_fin P1 mA.
have iLA : P.-integrable A (EFin \o L) := integrableS measurableT mA (@subsetT _ A) iL.
have lA : (\int[P]_(x in A) (L x)%:E)%E = l%:E.
  by rewrite fineK //; exact: (integral_fune_fin_num mA iLA).
have QA : Q A = (fine (Q A))%:E := P_fin Q1 mA.
have mEA : measurable_fun A (fun x => (exp (- L x))%:E).
  apply: (measurable_funS measurableT (@subsetT _ A)).
  exact: (measurable_fun_comp (@measurable_fun_EFin _ setT) mE).
have iEA : P.-integrable A (fun x => (exp (- L x))%:E).
  split => //; rewrite (eq_integral (fun x => (exp (- L x))%:E)).
    by rewrite -dQ // QA ltry.
  by move=> x _; rewrite gee0_abs // lee_fin; apply/RlebP; left; exact: exp_pos.
have [p0|p0] : p = 0 \/ Rlt 0 p.
  by have := P_ge0 P A; move/RlebP; rewrite -/p; case; [right|left].
  rewrite p0 Rmult_0_l.
  have A0 : P A = 0%E by rewrite PA p0.
  have ab := le_abse_integral P mA (proj1 iLA).
  have z : (\int[P]_(x in A) `|(EFin \o L) x| = 0)%E.
    rewrite (negligible_integral mA mA) //; first by rewrite setDv integral_set0.
    exact: (measurable_fun_comp (@measurable_fun_abse _ setT) (proj1 iLA)).
  move: ab; rewrite z lA lee_fin normr_le0 => /eqP ->; right; reflexivity.
apply: cell_arith => //; exact: (cell_lower mA p0).
Qed.

(* Data processing: every finite measurable quantisation q has
   KL(q#P || q#Q) <= E_P[L]. *)
Theorem kl_quantised_le (U : finType) (q : X -> U) :
  (forall t, measurable (q @^-1` [set t])) ->
  Rle (KL (fun t => fine (P (q @^-1` [set t]))) (fun t => fine (Q (q @^-1` [set t]))))
      (fine (\int[P]_x (L x)%:E)%E).
Proof.
move=> mq; rewrite -(@integral_fibres _ _ P U q L mq iL) /KL.
apply: leR_sum => t _; exact: cell_le.
Qed.
End DataProcessing.

Section FibreSums.
Context d (X : measurableType d).
Variables (P : {measure set X -> \bar real_realType}).
Hypothesis P1 : P setT = 1%E.

Lemma preimage_fibres (T : finType) (q : X -> T) (S : set T) :
  q @^-1` S = \bigcup_(t in S) q @^-1` [set t].
Proof.
apply/seteqP; split => [x Sx | x [t St qt]]; first by exists (q x).
by rewrite /preimage /= qt.
Qed.

Lemma preimage_measurable (T : finType) (q : X -> T) (S : set T) :
  (forall t, measurable (q @^-1` [set t])) -> measurable (q @^-1` S).
Proof.
move=> mq; rewrite preimage_fibres; apply: fin_bigcup_measurable => //.
Qed.

(* P(q^-1 S) = sum over t in S of P(q^-1 t), for a finite measurable q. *)
Lemma fine_preimage (T : finType) (q : X -> T) (S : pred T) :
  (forall t, measurable (q @^-1` [set t])) ->
  fine (P (q @^-1` [set t | S t])) = \sum_(t | S t) fine (P (q @^-1` [set t])).
Proof.
move=> mq; set E := q @^-1` [set t | S t].
have mE : measurable E := preimage_measurable _ mq.
have iE : P.-integrable setT (EFin \o (\1_E : X -> real_realType)).
  split.
    by apply/EFin_measurable_fun; exact: measurable_fun_indic.
  rewrite (eq_integral (fun x => (\1_E x)%:E)).
    by rewrite integral_indic // setIT (P_fin P1 mE) ltry.
  by move=> x _; rewrite /comp gee0_abs // lee_fin indicE; case: (x \in E).

have e : P E = (\int[P]_x (\1_E x)%:E)%E by rewrite integral_indic // setIT.
rewrite e -(@integral_fibres _ _ P T q _ mq iE) [RHS]big_mkcond /=.
apply: eq_bigr => t _; rewrite integral_indic //.
case: ifPn => St.
  congr (fine (P _)); apply/seteqP; split => [x [] //|x qx]; split => //.
  by rewrite /E /= qx.
rewrite (_ : _ `&` _ = set0) ?measure0 //; apply/seteqP; split => [x [Ex qx]|x //].
by move: Ex; rewrite /E /= qx (negbTE St).
Qed.

End FibreSums.

(* An observation W with values in a measurable space X: under J* = j its
   law is the probability measure P j; J* is uniform on [n].  Its finite
   quantisations are the maps with measurable fibres, and the law of
   (J*, q(W)) is (1/n) P_j(q^-1 t). *)
Section MeasObs.
Context d (X : measurableType d) (n : nat).
Variable P : 'I_n -> {measure set X -> \bar real_realType}.
Hypothesis P1 : forall j, P j setT = 1%E.
Hypothesis n0 : (0 < n)%N.

Definition mqadm (T : finType) (q : X -> T) : Prop := forall t, measurable (q @^-1` [set t]).

Definition mqlaw (T : finType) (q : X -> T) (j : 'I_n) (t : T) : R :=
  Rmult (Rinv (INR n)) (fine (P j (q @^-1` [set t]))).

Lemma mqadm_const : mqadm (fun _ : X => tt).
Proof.
case=> /=; rewrite (_ : _ @^-1` _ = setT); first exact: measurableT.
by apply/seteqP; split => // x _; case: tt.
Qed.

Lemma mqadm_comp (T T' : finType) (q : X -> T) (f : T -> T') : mqadm q -> mqadm (f \o q).
Proof. by move=> mq t'; rewrite comp_preimage; exact: preimage_measurable. Qed.

Lemma mqlaw_joint (T : finType) (q : X -> T) : mqadm q -> is_joint (mqlaw q).
Proof.
move=> mq; have nR : Rlt 0 (INR n) by apply: lt_0_INR; apply/ssrnat.ltP.
split=> [j t|].
  apply: Rmult_le_pos; first by left; apply: Rinv_0_lt_compat.
  by apply/RlebP; exact: P_ge0.
rewrite (eq_bigr (fun _ => Rinv (INR n))); last first.
  move=> j _; rewrite /mqlaw sumR_scal.
  have := @fine_preimage _ _ (P j) (P1 j) T q predT mq; rewrite /= => <-.
  rewrite (_ : _ @^-1` _ = setT); last by apply/seteqP; split.
  by rewrite P1 /= Rmult_1_r.
by rewrite sumR_constT card_ord Rinv_r //; lra.
Qed.

Lemma mqlaw_push (T T' : finType) (q : X -> T) (f : T -> T') j t' :
  mqadm q -> mqlaw (f \o q) j t' = \sum_(t | f t == t') mqlaw q j t.
Proof.
move=> mq; rewrite /mqlaw sumR_scal; congr (Rmult _ _).
rewrite -(@fine_preimage _ _ (P j) (P1 j) T q (fun t => f t == t') mq).
by congr (fine (P j _)); apply/seteqP; split => x /=; [move=> <- | move/eqP].
Qed.

Definition meas_obs : obs_law n X :=
  @ObsLaw n X mqadm mqadm_const mqadm_comp mqlaw mqlaw_joint mqlaw_push.

Lemma meas_obs_uniform j : qlaw meas_obs (fun _ : X => tt) j tt = Rinv (INR n).
Proof.
rewrite /= /mqlaw (_ : _ @^-1` _ = setT); last by apply/seteqP; split.
by rewrite P1 /= Rmult_1_r.
Qed.

End MeasObs.

(* Proposition 2 for an observation in a measurable space whose laws have
   pairwise densities dP_k/dP_j = exp(-L_jk) with E_{P_j}[L_jk] <= c:
   I(J*; W) <= (1 - 1/n) c / ln 2, hence <= c / ln 2 bits. *)
Section Prop2Meas.
Context d (X : measurableType d) (n : nat).
Variable P : 'I_n -> {measure set X -> \bar real_realType}.
Hypothesis P1 : forall j, P j setT = 1%E.
Hypothesis n0 : (0 < n)%N.
Variable Lr : 'I_n -> 'I_n -> X -> R.
Hypothesis iL : forall j k, (P j).-integrable setT (EFin \o Lr j k).
Hypothesis mE : forall j k,
  measurable_fun setT ((fun x => exp (- Lr j k x)) : X -> real_realType).
Hypothesis dens : forall j k A, measurable A ->
  P k A = (\int[P j]_(x in A) (exp (- Lr j k x))%:E)%E.

Lemma quantised_dist (T : finType) (q : X -> T) j : mqadm q ->
  is_dist (fun t => fine (P j (q @^-1` [set t]))).
Proof.
move=> mq; split=> [t|]; first by apply/RlebP; exact: P_ge0.
have := @fine_preimage _ _ (P j) (P1 j) T q predT mq; rewrite /= => <-.
rewrite (_ : _ @^-1` _ = setT); last by apply/seteqP; split.
by rewrite P1.
Qed.

Lemma meas_obs_quantised (T : finType) (q : X -> T) :
  qlaw (meas_obs P1 n0) q = (fun j t => Rmult (Rinv (INR n)) (fine (P j (q @^-1` [set t])))).
Proof. by []. Qed.

Theorem prop2_meas_tight (kappa sigma : R) :
  Rlt 0 sigma ->
  (forall j k, j <> k ->
     Rle (fine (\int[P j]_x (Lr j k x)%:E)%E) (Rdiv (pow (ln kappa) 2) (pow sigma 2))) ->
  Rle (MIobs (meas_obs P1 n0))
      (Rmult (Rminus 1 (Rinv (INR n)))
             (Rmult (Rdiv (pow (log2 kappa) 2) (pow sigma 2)) (ln 2))).
Proof.
move=> s0 mean; apply: MIobs_least => T q mq.
rewrite meas_obs_quantised.
have Pd : forall j, is_dist (fun t => fine (P j (q @^-1` [set t]))).
  by move=> j; apply: quantised_dist.
apply: (prop2_content_tight n0 Pd _ s0) => [j k t|j k ne].
  exact: (cell_pos (P1 j) (P1 k) (iL j k) (mE j k) (dens j k) (mq t)).
apply: Rle_trans (mean j k ne).
exact: (kl_quantised_le (P1 j) (P1 k) (iL j k) (mE j k) (dens j k) mq).
Qed.

End Prop2Meas.

(* The premises are satisfiable (no vacuity): every J* = j gives the same
   law, a Dirac mass, with likelihood ratios exp(-0). *)
Lemma meas_channel_nonvacuous d (X : measurableType d) (a : X) (n : nat) (c : R) :
  Rle 0 c ->
  let P (j : 'I_n) : {measure set X -> \bar real_realType} := \d_a in
  let Lr (j k : 'I_n) (x : X) : R := 0 in
  (forall j, P j setT = 1%E) /\
  (forall j k, (P j).-integrable setT (EFin \o Lr j k)) /\
  (forall j k, measurable_fun setT ((fun x => exp (- Lr j k x)) : X -> real_realType)) /\
  (forall j k A, measurable A ->
     P k A = (\int[P j]_(x in A) (exp (- Lr j k x))%:E)%E) /\
  (forall j k, Rle (fine (\int[P j]_x (Lr j k x)%:E)%E) c).
Proof.
move=> c0 P Lr; split.
  by move=> j; rewrite /P /= /dirac indicE mem_set.
split; first by move=> j k; exact: integrable0.
split; first by move=> j k; exact: (measurable_fun_cst (exp (- 0) : real_realType)).
split.
  move=> j k A mA; rewrite (eq_integral (cst 1%:E)); last first.
    move=> x _; rewrite /Lr /=; congr (_%:E).
    by transitivity (exp 0); [congr exp; exact: oppr0 | exact: exp_0].
  by rewrite integral_cst // mul1e.
by move=> j k; rewrite integral0.
Qed.
